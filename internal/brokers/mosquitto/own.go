package mosquitto

import (
	"os"
	"path/filepath"

	"pslab/internal/brokers"
)

// ownProcess recognises a Mosquitto pslab started (Descriptor.OwnProcess),
// for the clean-up of dead runs: Mosquitto does not watch its parent, so
// one whose pslab was killed keeps running, in the lab's broker namespace
// when the run emulated a link. Its command line runs the configuration
// of a run directory (-c DIR/mosquitto.conf, DIR a pslab-* under pslab's
// cache cacheDir or /var/lib/mosquitto). One `pslab broker start
// mosquitto` left on purpose (its run directory marked detached) may be
// on the host network.
func ownProcess(cacheDir string, cmdline, _ []byte) (brokers.OwnProcess, bool) {
	dir := runDirOf(cmdline, runBases(cacheDir))
	if dir == "" {
		return brokers.OwnProcess{}, false
	}
	_, err := os.Stat(filepath.Join(dir, detachedFile))
	return brokers.OwnProcess{What: "Mosquitto (run directory " + dir + ")", KeepOnHost: err == nil}, true
}
