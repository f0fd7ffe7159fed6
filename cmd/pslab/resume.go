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
var notStored = map[string]bool{"out": true, "resume": true, "force": true, "lab": true, "verbose": true, "dry-run": true}

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
	if err := checkNewRunRoot(root); err != nil {
		return "", err
	}
	info, err := lab.NewRunInfo(storedArgs(cmd, files), files)
	if err != nil {
		return "", err
	}
	if cmd.Name() != "run" {
		info.Command = cmd.Name() // a sweep: resumed from its flags
	}
	return root, lab.WriteRunInfo(root, info)
}

// checkNewRunRoot refuses a root that already holds a run: that run is
// resumed with --resume, or the new one goes elsewhere.
func checkNewRunRoot(root string) error {
	if _, err := os.Stat(filepath.Join(root, lab.RunInfoFile)); err == nil && holdsRecords(root) {
		return badInputf("%s already holds a run (%s): continue it with --resume %s, or give another --out", root, lab.RunInfoFile, root)
	}
	return nil
}

// resumeRun continues the run in rf.dir with the files and flags its
// run.json keeps. Everything is checked before anything is changed.
func resumeRun(cmd *cobra.Command, files []string, f runFlags, rf resumeFlags) error {
	if len(files) > 0 {
		return badInputf("--resume %s takes the scenario files from %s; give none (got %s)", rf.dir, filepath.Join(rf.dir, lab.RunInfoFile), strings.Join(files, " "))
	}
	var given []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if !notStored[fl.Name] || fl.Name == "out" {
			given = append(given, "--"+fl.Name)
		}
	})
	if len(given) > 0 {
		return badInputf("--resume takes the run's flags from %s; not with it: %s (allowed: --force, --lab, --verbose, --dry-run)", filepath.Join(rf.dir, lab.RunInfoFile), strings.Join(given, ", "))
	}
	info, err := lab.ReadRunInfo(rf.dir)
	if err != nil {
		return badInput(err)
	}
	changes := info.Changes()
	if len(changes) > 0 && !rf.force {
		return badInputf("cannot resume %s, it would mix two measurements:\n  %s\n(--force resumes anyway; run.json then records what was overridden)", rf.dir, strings.Join(changes, "\n  "))
	}
	sweep := info.Command == "sweep"
	stored := &cobra.Command{Use: "run"}
	var sf runFlags
	var sw sweepFlags
	addRunFlags(stored, &sf, !sweep)
	if sweep {
		addSweepFlags(stored, &sw)
	}
	stored.SetErr(cmd.ErrOrStderr())
	stored.SetOut(cmd.OutOrStdout())
	if err := stored.Flags().Parse(info.Args); err != nil {
		return badInputf("%s: args: %v", filepath.Join(rf.dir, lab.RunInfoFile), err)
	}
	sf.out, sf.verbose, sf.labName = rf.dir, f.verbose, f.labName
	if cmd.Flags().Changed("parallel") { // how many labs is not what is measured
		sf.parallel = f.parallel
	}
	opts, err := optionsFrom(stored, sf)
	if err != nil {
		return err
	}
	var plans []lab.Plan
	if sweep {
		p, err := sweepPlan(sw, opts)
		if err != nil {
			return err
		}
		plans = []lab.Plan{p}
	} else if plans, err = loadPlans(stored.Flags().Args(), sf.quick, opts); err != nil {
		return err
	}
	var dirs []string
	aside := 0
	for _, p := range plans {
		dir := outDir(rf.dir, p.Suite.Name, len(plans) > 1)
		fin, n, err := results.Unfinished(dir)
		if err != nil {
			return badInput(err)
		}
		opts.Finished = append(opts.Finished, fin...)
		aside += n
		dirs = append(dirs, dir)
	}
	if f.dryRun { // the plan of what is left: nothing set aside, run.json as it was
		return printPlans(cmd, plans, opts, rf.dir)
	}
	for _, dir := range dirs {
		if err := results.SetAsideUnfinished(dir); err != nil {
			return err
		}
	}
	var forced []string
	if rf.force {
		forced = changes
	}
	info.Resumed = append(info.Resumed, lab.NewResumeOccasion(forced))
	if err := lab.WriteRunInfo(rf.dir, info); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "resuming %s: %d finished repetition(s) kept; %d failed or interrupted set aside in %s and run again\n",
		rf.dir, len(opts.Finished), aside, results.SupersededFile)
	return runPlans(cmd, plans, opts, rf.dir)
}

// holdsRecords reports whether root, or a suite directory in it, has
// records: a run that measured nothing is not worth keeping.
func holdsRecords(root string) bool {
	matches, _ := filepath.Glob(filepath.Join(root, "*", results.RecordsFile))
	_, err := os.Stat(filepath.Join(root, results.RecordsFile))
	return err == nil || len(matches) > 0
}
