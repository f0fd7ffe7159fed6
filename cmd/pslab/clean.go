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
		Short: "Stop and remove what killed or finished runs left",
		Long: `Stop and remove what runs left behind:

  - broker processes of dead runs (an Artemis JVM outlives a SIGKILLed or
    twice-interrupted pslab): stopped with SIGTERM, then SIGKILL after 30 s,
    and only when provably pslab's own: its command line runs an instance
    under pslab's cache (a nats-server child: pslab's environment and a store
    there), the pslab that started it is gone, it sees this machine's file
    system, and it runs in the broker namespace of a lab no run holds, in a
    lab namespace removed while it ran, or on the host network (runs without
    root; the default Artemis instance there is left alone: it may be one
    "pslab broker start" left running on purpose);
  - embedded NATS stores of runs that were killed (~/.cache/pslab/nats/store-*);
  - Artemis instances of lab names (--lab) that no broker runs and no run
    holds (~/.cache/pslab/artemis/instances/lab-*; the default instance stays);
  - the namespaces and lock files (/run/pslab-<lab>.lock) of labs no run holds.

Nothing a live pslab uses is touched. Prints each item. A run does all but
the instances by itself before it starts; the instances only go with clean.`,
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
