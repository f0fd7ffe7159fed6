package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"pslab/internal/broker"
)

// brokerState is what `pslab broker start` leaves for `stop` (0600: it
// holds the generated credentials).
type brokerState struct {
	Name     string `json:"name"`
	PID      int    `json:"pid"`
	URL      string `json:"url"`
	User     string `json:"user"`
	Password string `json:"password"`
	Store    string `json:"store,omitempty"`
}

func statePath(name string) string { return filepath.Join(broker.CacheDir(), name+".state.json") }

func newBrokerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Install, start and stop the brokers pslab measures",
		Long: `Start a broker in the background on loopback for manual use, or stop it.
` + "`pslab run`" + ` does not need this: it starts (and installs) its own brokers.`,
		Example: `  pslab broker install artemis
  pslab broker start nats
  pslab broker stop nats`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "install NAME",
		Short: "Install a broker (artemis) into pslab's cache",
		Long: `Install ActiveMQ Artemis ` + broker.DefaultArtemisVersion + `: fetch the distribution through Maven
(the local Maven repository is the cache), unpack it under pslab's cache
directory and create an instance with a generated password (stored with mode
0600), required login, no web console and a bounded heap. Nothing half-done is
left looking complete. NATS needs no install: it is embedded.`,
		Example: "  pslab broker install artemis",
		Args:    argsCheck(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case "nats":
				fmt.Fprintln(cmd.OutOrStdout(), "nats: embedded in pslab, nothing to install")
				return nil
			case "artemis":
				a := broker.NewArtemis(broker.ArtemisConfig{})
				if a.Installed() {
					fmt.Fprintf(cmd.OutOrStdout(), "artemis %s already installed: %s\n", a.Config().Version, a.InstanceDir())
					return nil
				}
				if err := a.Install(cmd.Context(), cmd.ErrOrStderr()); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "artemis %s installed: %s\n", a.Config().Version, a.InstanceDir())
				return nil
			}
			return badInputf("unknown broker %q (known: nats, artemis)", args[0])
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "start NAME",
		Short: "Start a broker in the background on loopback",
		Long: `Start a broker in the background on 127.0.0.1 and print its URL and
generated credentials (also stored, mode 0600, in pslab's cache directory).
NATS runs as pslab's embedded nats-server with JetStream; Artemis is installed
first if needed.`,
		Example: "  pslab broker start nats\n  pslab broker start artemis",
		Args:    argsCheck(cobra.ExactArgs(1)),
		RunE:    func(cmd *cobra.Command, args []string) error { return brokerStart(cmd, args[0]) },
	})
	cmd.AddCommand(&cobra.Command{
		Use:     "stop NAME",
		Short:   "Stop a broker started with `pslab broker start` (or left by a killed run)",
		Long:    "Stop a broker started with `pslab broker start` (SIGTERM, then SIGKILL) and remove its state.",
		Example: "  pslab broker stop nats\n  pslab broker stop artemis",
		Args:    argsCheck(cobra.ExactArgs(1)),
		RunE:    func(cmd *cobra.Command, args []string) error { return brokerStop(cmd, args[0]) },
	})
	return cmd
}

func init() { rootCmd.AddCommand(newBrokerCmd()) }

func brokerStart(cmd *cobra.Command, name string) error {
	switch name {
	case "nats":
	case "artemis":
		return artemisStart(cmd)
	default:
		return badInputf("unknown broker %q (known: nats, artemis)", name)
	}
	if st, err := readState(name); err == nil && processAlive(st.PID) {
		return fmt.Errorf("%s is already running (pid %d, %s); stop it first with `pslab broker stop %s`", name, st.PID, st.URL, name)
	}
	b := broker.NewNATS(broker.NATSConfig{Port: 4222, Detached: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ep, err := b.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		return err
	}
	st := brokerState{Name: name, PID: b.PID(), URL: ep.URL, User: ep.User, Password: ep.Password, Store: b.Settings()["jetstream_store"]}
	data, _ := json.MarshalIndent(st, "", "  ")
	if err := os.MkdirAll(broker.CacheDir(), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(statePath(name), data, 0o600); err != nil {
		_ = b.Stop(context.Background())
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s running, pid %d\nurl:      %s\nuser:     %s\npassword: %s\n(state in %s)\n",
		name, st.PID, st.URL, st.User, st.Password, statePath(name))
	return nil
}

// artemisStart starts the Artemis instance on loopback and leaves it
// running; its PID file lets `stop` (and the next run) find it.
func artemisStart(cmd *cobra.Command) error {
	a := broker.NewArtemis(broker.ArtemisConfig{})
	if !a.Installed() {
		if err := a.Install(cmd.Context(), cmd.ErrOrStderr()); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := a.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "artemis running, pid %d\nurl:      %s\nuser:     %s\npassword: (in %s)\n",
		a.PID(), ep.URL, ep.User, a.CredentialsFile())
	return nil
}

func brokerStop(cmd *cobra.Command, name string) error {
	switch name {
	case "nats":
	case "artemis":
		pid, err := broker.NewArtemis(broker.ArtemisConfig{}).StopLeftover(context.Background())
		if err != nil {
			return err
		}
		if pid == 0 {
			return fmt.Errorf("no running artemis of pslab's instance")
		}
		fmt.Fprintf(cmd.OutOrStdout(), "artemis stopped (pid %d)\n", pid)
		return nil
	default:
		return badInputf("unknown broker %q (known: nats, artemis)", name)
	}
	st, err := readState(name)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no %s started by `pslab broker start` (no %s)", name, statePath(name))
	}
	if err != nil {
		return err
	}
	if processAlive(st.PID) {
		if err := broker.StopDetached(context.Background(), st.PID, 10*time.Second); err != nil {
			return err
		}
	}
	if st.Store != "" {
		os.RemoveAll(st.Store)
	}
	if err := os.Remove(statePath(name)); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s stopped (pid %d)\n", name, st.PID)
	return nil
}

func readState(name string) (brokerState, error) {
	var st brokerState
	data, err := os.ReadFile(statePath(name))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

// processAlive is true for a running, non-zombie process.
func processAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// state follows the ")" closing the command name
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == ')' && i+2 < len(data) {
			return data[i+2] != 'Z'
		}
	}
	return true
}
