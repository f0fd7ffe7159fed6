package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/brokers"
	"pslab/internal/lab"
)

// versionLine is what `pslab version` prints: pslab's build, Go and the
// brokers' versions.
func versionLine() string {
	return fmt.Sprintf("pslab %s (%s%s)", lab.Version(), runtime.Version(), brokerVersions())
}

// brokerVersions lists ", NAME VERSION" for each registered broker whose
// version pslab knows before it runs.
func brokerVersions() string {
	var b strings.Builder
	for _, n := range brokers.Names() {
		if d, _ := brokers.Lookup(n); d.Version != "" {
			fmt.Fprintf(&b, ", %s %s", n, d.Version)
		}
	}
	return b.String()
}

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:     "version",
		Short:   "Print pslab's version and the versions it measures with",
		Long:    "Print pslab's build revision, the Go runtime and the version of each broker pslab runs (embedded, or the one it installs).",
		Example: "  pslab version",
		Args:    argsCheck(cobra.NoArgs),
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
		},
	})
}
