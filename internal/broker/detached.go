package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"pslab/internal/driver"
)

// Detached is what `pslab broker start NAME` leaves for `pslab broker stop
// NAME`, for a broker package that runs its broker as a child process
// (nats, mosquitto): kept in DetachedPath(NAME), mode 0600 (it holds the
// generated password).
type Detached struct {
	Name     string `json:"name,omitempty"`
	PID      int    `json:"pid"`
	URL      string `json:"url"`
	User     string `json:"user"`
	Password string `json:"password"`
	// Dir is the broker's directory (Mosquitto's run directory), removed
	// by stop.
	Dir string `json:"dir,omitempty"`
	// Store is the nats-server's JetStream store, removed by stop.
	Store string `json:"store,omitempty"`
}

// DetachedPath is where `pslab broker start name` keeps its state.
func DetachedPath(name string) string { return filepath.Join(CacheDir(), name+".state.json") }

// ReadDetached reads the state `pslab broker start name` left.
func ReadDetached(name string) (Detached, error) {
	var st Detached
	data, err := os.ReadFile(DetachedPath(name))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

// CheckNoDetached refuses a second `pslab broker start name` while the
// first one's broker runs.
func CheckNoDetached(name string) error {
	if st, err := ReadDetached(name); err == nil && ProcessAlive(st.PID) {
		return fmt.Errorf("%s is already running (pid %d, %s); stop it first with `pslab broker stop %s`", name, st.PID, st.URL, name)
	}
	return nil
}

// StartDetached starts b on loopback (within 30 s) for `pslab broker start
// name`, b having been made to outlive this process, and writes its state
// from what describe makes of its endpoint. When the state cannot be
// written, b is stopped again.
func StartDetached(name string, b Broker, describe func(ep driver.Endpoint) Detached) (Detached, driver.Endpoint, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ep, err := b.Start(ctx, LoopbackHost{})
	if err != nil {
		return Detached{}, ep, err
	}
	st := describe(ep)
	data, _ := json.MarshalIndent(st, "", "  ")
	if err := os.MkdirAll(CacheDir(), 0o700); err != nil {
		_ = b.Stop(context.Background())
		return st, ep, err
	}
	if err := os.WriteFile(DetachedPath(name), data, 0o600); err != nil {
		_ = b.Stop(context.Background())
		return st, ep, err
	}
	return st, ep, nil
}

// StopDetachedBroker is `pslab broker stop name`: it stops the broker
// `pslab broker start name` left running, removes its directories and
// its state, and says so on out.
func StopDetachedBroker(ctx context.Context, name string, out io.Writer) error {
	st, err := ReadDetached(name)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no %s started by `pslab broker start` (no %s)", name, DetachedPath(name))
	}
	if err != nil {
		return err
	}
	if ProcessAlive(st.PID) {
		if err := StopDetached(ctx, st.PID, 10*time.Second); err != nil {
			return err
		}
	}
	for _, dir := range []string{st.Dir, st.Store} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	if err := os.Remove(DetachedPath(name)); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s stopped (pid %d)\n", name, st.PID)
	return nil
}
