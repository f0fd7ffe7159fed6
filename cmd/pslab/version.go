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
		Use:   "version",
		Short: "Print pslab's version and the versions it measures with",
		Long: `Print pslab's build identity, the Go runtime and the embedded nats-server
version. The build identity is the VCS revision the binary was stamped
with, or else "sha256:" and the first 12 hex digits of the executable's
SHA-256; "+dirty" when the source tree is known to have differed from its
commit. The second line is its long form (docs/design.md, "Build
identity"). Records carry both (versions.pslab, versions.pslab_build), and
a run is resumed only by the same build (or with --force).`,
		Example: "  pslab version",
		Args:    argsCheck(cobra.NoArgs),
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "pslab %s (%s, embedded nats-server %s)\nbuild: %s\n", lab.Version(), runtime.Version(), server.VERSION, lab.Build())
		},
	})
}
