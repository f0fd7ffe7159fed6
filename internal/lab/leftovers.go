package lab

import (
	"fmt"
	"io"

	"pslab/internal/broker"
	"pslab/internal/cleanup"
)

// removeLeftovers removes what killed runs left (NATS stores, lock files
// and namespaces of labs no run holds) before a run, and says so.
func removeLeftovers(log io.Writer) {
	removed, err := cleanup.Leftovers(cleanup.Options{CacheDir: broker.CacheDir()})
	for _, r := range removed {
		fmt.Fprintf(log, "cleanup: removed %s\n", r)
	}
	if err != nil {
		fmt.Fprintf(log, "cleanup: %v\n", err)
	}
}

// artemisInstallNote says what installing a just-created Artemis will do:
// the first use installs the distribution, a new lab name only creates
// its own instance (the distribution is cached).
func artemisInstallNote(a *broker.Artemis, labName string) string {
	if a.HomeInstalled() {
		return fmt.Sprintf("creating the Artemis %s instance of lab %s (pslab clean removes it once unused) ...", a.Config().Version, labName)
	}
	return fmt.Sprintf("installing Artemis %s (first use) ...", a.Config().Version)
}
