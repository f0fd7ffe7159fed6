package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"pslab/internal/lab"
	"pslab/internal/results"
)

// resumeFlags are run's --resume and --force.
type resumeFlags struct {
	dir   string
	force bool
}

func addResumeFlags(cmd *cobra.Command, rf *resumeFlags) {
	cmd.Flags().StringVar(&rf.dir, "resume", "", "continue the interrupted run in this output directory (its run.json): finished repetitions are not run again")
	cmd.Flags().BoolVar(&rf.force, "force", false, "with --resume: continue even though a scenario file or pslab's version changed")
}

// notStored are the flags a run's run.json leaves out: where it writes,
// how it is resumed, and what does not change what is measured.
var notStored = map[string]bool{"out": true, "resume": true, "force": true, "lab": true, "verbose": true}

// storedArgs are the files and flags of a run as run.json keeps them.
func storedArgs(cmd *cobra.Command, files []string) []string {
	var args []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if notStored[fl.Name] {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+fl.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+fl.Name+"="+fl.Value.String())
	})
	return append(args, files...)
}

// startRunInfo writes run.json for a new run and returns the output root
// to run into. A root that already holds a run is refused: that run is
// resumed with --resume, or the new one goes elsewhere. Several files
// without --out go to a directory each and cannot be resumed (said).
func startRunInfo(cmd *cobra.Command, files []string, plans []lab.Plan, out string) (string, error) {
	root := out
	if root == "" && len(plans) == 1 {
		root = outDir("", plans[0].Suite.Name, false)
	}
	if root == "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "note: several scenario files without --out: each goes to its own directory, and the run cannot be resumed (give --out DIR to make it resumable)")
		return "", nil
	}
	if _, err := os.Stat(filepath.Join(root, lab.RunInfoFile)); err == nil && holdsRecords(root) {
		return "", badInputf("%s already holds a run (%s): continue it with --resume %s, or give another --out", root, lab.RunInfoFile, root)
	}
	info, err := lab.NewRunInfo(storedArgs(cmd, files), files)
	if err != nil {
		return "", err
	}
	if cmd.Name() != "run" && cmd.Name() != "sweep" {
		info.Command = cmd.Name()
	}
	return root, lab.WriteRunInfo(root, info)
}

// resumeRun continues the run in rf.dir with the files and flags its
// run.json keeps. Everything is checked before anything is changed.
func resumeRun(cmd *cobra.Command, files []string, f runFlags, rf resumeFlags) error {
	info, err := checkResume(cmd, files, rf)
	if err != nil {
		return err
	}
	if info.Command != "" {
		return badInputf("%s is a run of pslab %s: resume it with pslab %s --resume %s", rf.dir, info.Command, info.Command, rf.dir)
	}
	var sf runFlags
	stored, err := storedCommand(cmd, "run", info, rf.dir, func(c *cobra.Command) { addRunFlags(c, &sf, true) })
	if err != nil {
		return err
	}
	resumedFlags(cmd, &sf, f, rf)
	opts, err := optionsFrom(stored, sf)
	if err != nil {
		return err
	}
	return resumePlans(cmd, rf, info, stored, sf.quick, opts, func(plans []lab.Plan, opts lab.Options) error {
		return runPlans(cmd, plans, opts, rf.dir)
	})
}

// resumedFlags are the stored run's flags sf with what a resume may give
// anew: where it writes (rf.dir), -v, --lab and --parallel (how many labs
// is not what is measured).
func resumedFlags(cmd *cobra.Command, sf *runFlags, f runFlags, rf resumeFlags) {
	sf.out, sf.verbose, sf.labName = rf.dir, f.verbose, f.labName
	if cmd.Flags().Changed("parallel") {
		sf.parallel = f.parallel
	}
}

// resumePlans loads the stored run's plans with opts, sets aside its
// unfinished records and runs the plans from the finished ones (run).
func resumePlans(cmd *cobra.Command, rf resumeFlags, info lab.RunInfo, stored *cobra.Command, quick bool, opts lab.Options,
	run func([]lab.Plan, lab.Options) error) error {
	opts.ForceMixed = rf.force
	plans, err := loadPlans(stored.Flags().Args(), quick, opts)
	if err != nil {
		return err
	}
	if opts.Finished, err = resumeFinished(cmd, rf, plans, info); err != nil {
		return err
	}
	return run(plans, opts)
}

// storedCommand is the command a run was started with, its flags (those
// add registers) parsed from the run.json in dir.
func storedCommand(cmd *cobra.Command, name string, info lab.RunInfo, dir string, add func(*cobra.Command)) (*cobra.Command, error) {
	stored := &cobra.Command{Use: name}
	add(stored)
	stored.SetErr(cmd.ErrOrStderr())
	stored.SetOut(cmd.OutOrStdout())
	if err := stored.Flags().Parse(info.Args); err != nil {
		return nil, badInputf("%s: args: %v", filepath.Join(dir, lab.RunInfoFile), err)
	}
	return stored, nil
}

// checkResume checks a resume of the run in rf.dir before anything is
// changed: no files or flags of its own (they are the run's), a run.json,
// and the scenario files unchanged unless --force. A changed pslab build
// is said, not refused: the lab sets aside the other build's records and
// their rows start over, unless --force counts them (identity.go).
func checkResume(cmd *cobra.Command, files []string, rf resumeFlags) (lab.RunInfo, error) {
	if len(files) > 0 {
		return lab.RunInfo{}, badInputf("--resume %s takes the scenario files from %s; give none (got %s)", rf.dir, filepath.Join(rf.dir, lab.RunInfoFile), strings.Join(files, " "))
	}
	var given []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if !notStored[fl.Name] || fl.Name == "out" {
			given = append(given, "--"+fl.Name)
		}
	})
	if len(given) > 0 {
		return lab.RunInfo{}, badInputf("--resume takes the run's flags from %s; not with it: %s (allowed: --force, --lab, --verbose)", filepath.Join(rf.dir, lab.RunInfoFile), strings.Join(given, ", "))
	}
	info, err := lab.ReadRunInfo(rf.dir)
	if err != nil {
		return info, badInput(err)
	}
	changes := info.Changes()
	if len(changes) > 0 && !rf.force {
		return info, badInputf("cannot resume %s, it would mix two measurements:\n  %s\n(--force resumes anyway; run.json then records what was overridden)", rf.dir, strings.Join(changes, "\n  "))
	}
	if v := info.VersionChange(); v != "" {
		what := "the finished records of the other build are set aside and their rows start over (--force counts them, and the rows then mix)"
		if rf.force {
			what = "--force: the finished records of the other build count, and their rows mix (the report says so)"
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s: %s\n", v, what)
	}
	return info, nil
}

// resumeFinished sets aside the failed and interrupted records of the
// plans' bundles, notes the resume in run.json and returns the finished
// records, which are not run again.
func resumeFinished(cmd *cobra.Command, rf resumeFlags, plans []lab.Plan, info lab.RunInfo) ([]results.Record, error) {
	var finished []results.Record
	var dirs []string
	aside := 0
	for _, p := range plans {
		dir := outDir(rf.dir, p.Suite.Name, len(plans) > 1)
		fin, n, err := results.Unfinished(dir)
		if err != nil {
			return nil, badInput(err)
		}
		finished = append(finished, fin...)
		aside += n
		dirs = append(dirs, dir)
	}
	for _, dir := range dirs {
		if err := results.SetAsideUnfinished(dir); err != nil {
			return nil, err
		}
	}
	var forced []string
	if rf.force {
		forced = info.Changes()
		if v := info.VersionChange(); v != "" {
			forced = append(forced, v)
		}
	}
	info.Resumed = append(info.Resumed, lab.NewResumeOccasion(forced))
	if err := lab.WriteRunInfo(rf.dir, info); err != nil {
		return nil, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "resuming %s: %d finished repetition(s) kept; %d failed or interrupted set aside in %s and run again\n",
		rf.dir, len(finished), aside, results.SupersededFile)
	return finished, nil
}

// holdsRecords reports whether root, or a suite directory in it, has
// records: a run that measured nothing is not worth keeping.
func holdsRecords(root string) bool {
	matches, _ := filepath.Glob(filepath.Join(root, "*", results.RecordsFile))
	_, err := os.Stat(filepath.Join(root, results.RecordsFile))
	return err == nil || len(matches) > 0
}
