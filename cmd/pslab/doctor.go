package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/netem"
)

func init() {
	var urls []string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Say what this machine supports, and what to do about the rest",
		Long: `Check what pslab needs and report each item as ok, missing or limited,
with what to do: root and network namespaces (link emulation), which link
emulation backend the kernel allows, Java and Maven (Artemis), whether
Artemis is installed, and whether a Docker engine is reachable.

With --url NAME=URL (as for pslab run) it also checks brokers pslab does
not start: whether they are reachable, and warns when one lets clients in
without credentials (NATS: its INFO says no auth_required; STOMP: a CONNECT
without login is accepted). pslab's own brokers always require a
generated password.`,
		Example: "  pslab doctor\n  pslab doctor --url nats=nats://127.0.0.1:4222 --url artemis=stomp://127.0.0.1:61613",
		Args:    argsCheck(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			u, err := parseURLs(urls)
			if err != nil {
				return err
			}
			doctor(cmd.OutOrStdout())
			doctorURLs(cmd.Context(), cmd.OutOrStdout(), u)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&urls, "url", nil, "also check a running broker: NAME=URL, e.g. nats=nats://127.0.0.1:4222 (repeatable)")
	rootCmd.AddCommand(cmd)
}

// doctorURLs checks external brokers: reachable, and closed to clients
// without credentials.
func doctorURLs(ctx context.Context, w io.Writer, urls map[string]string) {
	names := make([]string, 0, len(urls))
	for n := range urls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		what := name + " " + broker.Redact(urls[name])
		ext, err := broker.NewExternal(name, urls[name])
		if err != nil {
			fmt.Fprintf(w, "%-8s %-22s %v\n", "error", name, err)
			continue
		}
		open, detail, err := brokers.Default.OpenAccess(ctx, ext)
		switch {
		case err != nil:
			fmt.Fprintf(w, "%-8s %-22s %v\n", "error", name, err)
		case open:
			fmt.Fprintf(w, "%-8s %-22s %s: %s. WARNING: anyone who can reach it can publish and subscribe; configure a user and password (and pass them in the URL)\n", "WARNING", name, what, detail)
		default:
			fmt.Fprintf(w, "%-8s %-22s %s: requires authentication (%s)\n", "ok", name, what, detail)
		}
	}
}

func doctor(w io.Writer) {
	line := func(status, what, detail string) { fmt.Fprintf(w, "%-8s %-22s %s\n", status, what, detail) }
	if os.Geteuid() == 0 {
		line("ok", "root", "link emulation can build its namespaces")
	} else {
		line("limited", "root", "not root: runs wireline on loopback only; run as root for the emulated links")
	}
	if err := netem.Supported(); err != nil {
		line("missing", "link emulation", err.Error())
	} else {
		line("ok", "link emulation", "network namespaces, veth and netlink work")
		line("info", "emulation backend", backendReport())
	}
	if _, err := exec.LookPath("docker"); err != nil {
		line("info", "docker", "no docker client: docker-compose.yml is for machines with Docker")
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := exec.CommandContext(ctx, "docker", "info").Run(); err != nil {
			line("info", "docker", "client present but no engine reachable: docker-compose.yml cannot run here")
		} else {
			line("ok", "docker", "engine reachable: docker compose up runs the brokers in containers")
		}
	}
	for _, n := range brokers.Names() {
		if d, _ := brokers.Lookup(n); d.Doctor != nil {
			for _, c := range d.Doctor(context.Background()) {
				line(c.Status, c.What, c.Detail)
			}
		}
	}
}

// backendReport says which link emulation backend this kernel allows.
func backendReport() string {
	b, err := netem.KernelBackend()
	switch {
	case err != nil:
		return "could not probe: " + err.Error()
	case b == netem.BackendNetem:
		return "netem qdisc (sch_netem) for rate, loss, delay, jitter, duplication; the relay (user space) for the rest"
	default:
		return "tbf+nftables (no sch_netem in this kernel) for rate and random loss; the relay (user space) for delay, jitter, bursty loss, traces, outages and 802.11"
	}
}
