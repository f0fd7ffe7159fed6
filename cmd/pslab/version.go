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
		Use:   "version",
		Short: "Print pslab's version and the versions it measures with",
		Long: `Print pslab's build identity, the Go runtime and the version of each
broker pslab runs (embedded, or the one it installs). The build identity
is the VCS revision the binary was stamped with, or else "sha256:" and the
first 12 hex digits of the executable's SHA-256; "+dirty" when the source
tree is known to have differed from its commit. The second line is its
long form (docs/design.md, "Build identity"). Records carry both
(versions.pslab, versions.pslab_build), and a run is resumed only by the
same build (or with --force).`,
		Example: "  pslab version",
		Args:    argsCheck(cobra.NoArgs),
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "%s\nbuild: %s\n", versionLine(), lab.Build())
		},
	})
}
