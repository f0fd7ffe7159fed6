package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/brokers"
)

// withBroker runs, for the broker named by the command's argument, the
// action pick finds in its descriptor; an unknown broker, or one without
// that action (pick returns nil), is bad input.
func withBroker(cannot string, pick func(brokers.Descriptor) func(*cobra.Command) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		d, err := brokers.Default.Get(args[0])
		if err != nil {
			return badInputf("%v", err)
		}
		act := pick(d)
		if act == nil {
			return badInputf("%s %s: %s", d.Name, cannot, d.Summary)
		}
		return act(cmd)
	}
}

// brokerList is the registered brokers, one per line, for help texts.
func brokerList() string {
	var b strings.Builder
	for _, n := range brokers.Names() {
		d, _ := brokers.Lookup(n)
		fmt.Fprintf(&b, "  %-8s %s\n", n, d.Summary)
	}
	return b.String()
}

func newBrokerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Install, start and stop the brokers pslab measures",
		Long: `Start a broker in the background on loopback for manual use, or stop it.
` + "`pslab run`" + ` does not need this: it starts (and installs) its own brokers.

Brokers:
` + brokerList(),
		Example: `  pslab broker install artemis
  pslab broker start nats
  pslab broker stop nats`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "install NAME",
		Short: "Install a broker into pslab's cache",
		Long: `Install a broker into pslab's cache directory, as its summary below says
(Artemis: the distribution fetched through Maven, whose local repository is
the cache, unpacked, and an instance created with a generated password
stored with mode 0600, required login, no web console and a bounded heap;
docs/artemis.md). Nothing half-done is left looking complete. A broker
embedded in pslab needs no install.

Brokers:
` + brokerList(),
		Example: "  pslab broker install artemis",
		Args:    argsCheck(cobra.ExactArgs(1)),
		RunE: withBroker("cannot be installed", func(d brokers.Descriptor) func(*cobra.Command) error {
			if d.Install == nil {
				return nil
			}
			return func(cmd *cobra.Command) error { return d.Install(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()) }
		}),
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
		RunE: withBroker("cannot run in the background", func(d brokers.Descriptor) func(*cobra.Command) error {
			if d.Start == nil {
				return nil
			}
			return func(cmd *cobra.Command) error { return d.Start(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()) }
		}),
	})
	cmd.AddCommand(&cobra.Command{
		Use:     "stop NAME",
		Short:   "Stop a broker started with `pslab broker start` (or left by a killed run)",
		Long:    "Stop a broker started with `pslab broker start` (SIGTERM, then SIGKILL) and remove its state.",
		Example: "  pslab broker stop nats\n  pslab broker stop artemis",
		Args:    argsCheck(cobra.ExactArgs(1)),
		RunE: withBroker("has nothing to stop", func(d brokers.Descriptor) func(*cobra.Command) error {
			if d.Stop == nil {
				return nil
			}
			return func(cmd *cobra.Command) error { return d.Stop(cmd.Context(), cmd.OutOrStdout()) }
		}),
	})
	return cmd
}

func init() { rootCmd.AddCommand(newBrokerCmd()) }
