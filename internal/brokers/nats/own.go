package nats

import (
	"bytes"
	"path/filepath"
	"strings"

	"pslab/internal/brokers"
)

// ownProcess recognises pslab's nats-server child (Descriptor.OwnProcess)
// by its environment: PSLAB_CHILD=nats-server with a store under
// cacheDir/nats. One `pslab broker start nats` detached on purpose
// (PSLAB_NATS_DETACHED=true) is not a run's.
func ownProcess(cacheDir string, _, environ []byte) (brokers.OwnProcess, bool) {
	vars := map[string]string{}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		k, v, _ := strings.Cut(string(kv), "=")
		vars[k] = v
	}
	store := vars["PSLAB_NATS_STORE"]
	if vars["PSLAB_CHILD"] != "nats-server" || !strings.HasPrefix(store, filepath.Join(cacheDir, Name)+string(filepath.Separator)) {
		return brokers.OwnProcess{}, false
	}
	return brokers.OwnProcess{What: "nats-server (store " + store + ")", KeepOnHost: vars["PSLAB_NATS_DETACHED"] == "true"}, true
}
