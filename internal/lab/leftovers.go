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
