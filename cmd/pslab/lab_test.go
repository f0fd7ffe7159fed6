package main

// The run, sweep and capacity commands of these tests default to a lab
// of their own: a run's flags are refused while another pslab holds the
// lab, and pslab's default lab may be in use on the machine that runs the
// tests. Its name is not netem's test lab (pslabtest): CI runs the
// integration tests of both packages at the same time. Commands made from
// now on take it from defaultLabName; those rootCmd already holds are set
// here.
func init() {
	defaultLabName = "pslabcmd"
	for _, c := range rootCmd.Commands() {
		switch c.Name() {
		case "run", "sweep", "capacity":
			if f := c.Flags().Lookup("lab"); f != nil {
				_ = f.Value.Set(defaultLabName)
				f.DefValue = defaultLabName
			}
		}
	}
}
