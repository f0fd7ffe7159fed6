package main

import (
	"fmt"
	"runtime"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"

	"pslab/internal/lab"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:     "version",
		Short:   "Print pslab's version and the versions it measures with",
		Long:    "Print pslab's build revision, the Go runtime and the embedded nats-server version.",
		Example: "  pslab version",
		Args:    argsCheck(cobra.NoArgs),
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "pslab %s (%s, embedded nats-server %s)\n", lab.Version(), runtime.Version(), server.VERSION)
		},
	})
}
