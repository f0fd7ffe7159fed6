package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"pslab/internal/broker"
	"pslab/internal/cleanup"
)

func newCleanCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "clean",
		Short: "Remove what killed or finished runs left on disk",
		Long: `Remove what runs left behind: embedded NATS stores of runs that were killed
(~/.cache/pslab/nats/store-*), Artemis instances of lab names (--lab) that no
broker runs and no run holds (~/.cache/pslab/artemis/instances/lab-*; the
default instance stays), and the namespaces and lock files
(/run/pslab-<lab>.lock) of labs no run holds. Nothing a live pslab uses is
touched. Prints each item removed. A run removes the stores, lock files and
namespaces by itself; the instances only go with clean.`,
		Example: `  pslab clean`,
		Args:    argsCheck(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			removed, err := cleanup.Leftovers(cleanup.Options{CacheDir: broker.CacheDir(), Instances: true})
			for _, r := range removed {
				fmt.Fprintln(cmd.OutOrStdout(), "removed", r)
			}
			if len(removed) == 0 && err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), "nothing to remove")
			}
			return err
		},
	}
}

func init() { rootCmd.AddCommand(newCleanCmd()) }
