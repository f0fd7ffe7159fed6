package nats

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"pslab/internal/broker"
	"pslab/internal/brokers"
)

// StoreParent is where the embedded servers' JetStream stores are made
// (a fresh store-* per start) under pslab's cache cache.
func StoreParent(cache string) string { return filepath.Join(cache, Name) }

// leftovers removes the stores of runs that ended without stopping their
// broker (Descriptor.Leftovers).
func leftovers(o brokers.LeftoverOptions) ([]string, error) {
	return staleStores(StoreParent(o.CacheDir))
}

// staleStores removes NATS stores (dir/store-*) whose owner pslab is gone
// and that no nats-server child uses.
func staleStores(dir string) ([]string, error) {
	stores, _ := filepath.Glob(filepath.Join(dir, "store-*"))
	var removed []string
	var errs []error
	for _, s := range stores {
		if storeInUse(s) {
			continue
		}
		if err := os.RemoveAll(s); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "NATS store "+s+" of a run that ended without stopping its broker")
	}
	return removed, errors.Join(errs...)
}

func storeInUse(store string) bool {
	if b, err := os.ReadFile(filepath.Join(store, StoreOwnerFile)); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && broker.PIDExists(pid) {
			return true
		}
	}
	return broker.AnyProcess(func(pid int) bool {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		return err == nil && bytes.Contains(env, []byte("PSLAB_NATS_STORE="+store+"\x00"))
	})
}
