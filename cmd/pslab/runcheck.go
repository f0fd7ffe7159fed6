package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"pslab/internal/lab"
)

// checkRunFlags checks the flags of run and sweep before any file is read
// or anything built; every problem names its flag, all are reported at
// once, as bad input.
func checkRunFlags(cmd *cobra.Command, f runFlags) error {
	var problems []string
	fl := cmd.Flags()
	if fl.Changed("reps") && f.reps < 1 || f.reps < 0 {
		problems = append(problems, fmt.Sprintf("--reps must be at least 1, got %d", f.reps))
	}
	known := map[string]bool{}
	for _, b := range lab.BrokerNames() {
		known[b] = true
	}
	for _, b := range f.brokers {
		if !known[b] {
			problems = append(problems, fmt.Sprintf("--broker %s: unknown broker %q (known: %s)", b, b, strings.Join(lab.BrokerNames(), ", ")))
		}
	}
	for _, n := range f.networks {
		if err := lab.CheckNetwork(n); err != nil {
			problems = append(problems, fmt.Sprintf("--network %s: %v", n, err))
		}
	}
	if err := lab.CheckLab(f.labName); err != nil {
		problems = append(problems, err.Error())
	}
	if err := checkOutWritable(f.out); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return badInput(errors.New(strings.Join(problems, "\n")))
	}
	return nil
}

// checkOutWritable makes sure --out can become the run bundle, without
// creating anything: a directory this process may write into, or a path
// whose nearest existing parent is one.
func checkOutWritable(out string) error {
	if out == "" {
		out = "runs" // the default bundle goes under runs/
	}
	p := filepath.Clean(out)
	for {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				if p == filepath.Clean(out) {
					return fmt.Errorf("--out %s: exists and is not a directory", out)
				}
				return fmt.Errorf("--out %s: %s is not a directory", out, p)
			}
			if err := unix.Access(p, unix.W_OK|unix.X_OK); err != nil {
				return fmt.Errorf("--out %s: %s is not writable: %v", out, p, err)
			}
			return nil
		}
		if !os.IsNotExist(err) {
			return fmt.Errorf("--out %s: %v", out, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

// appendNew appends the items not in list yet (the same flag problem is
// found once per scenario file).
func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		dup := false
		for _, have := range list {
			dup = dup || have == it
		}
		if !dup {
			list = append(list, it)
		}
	}
	return list
}
