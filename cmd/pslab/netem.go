package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"pslab/netem"
	"pslab/netem/linkinfo"
)

type netemFlags struct {
	prefix   string
	backend  string
	duration time.Duration
	keep     bool
	rateTol  float64
	lossTol  float64
	asJSON   bool
	// brokerPID puts the broker side into that process's network namespace.
	brokerPID int
	// detached: a relay backend outlives the command (netem up).
	detached bool
}

func newNetemCmd() *cobra.Command {
	var f netemFlags
	cmd := &cobra.Command{
		Use:   "netem",
		Short: "Build, show, verify and remove the emulated link",
		Long: `pslab emulates the link between clients and broker in three network
namespaces it makes itself: <prefix>-cli (clients), <prefix>-rtr (the router
that shapes and drops) and <prefix>-brk (the broker), joined by veth pairs.
Every profile, wireline too, goes through the router. A profile of rate and
independent loss runs on the netem qdisc where the kernel has it, else on TBF
for the rate plus nftables random drop; anything else (delay, jitter,
Gilbert-Elliott loss, Mahimahi traces, outages, 802.11 airtime and retries)
on the relay, a process of this binary in the router namespace. The
profile's backend key or --backend chooses. Needs root.

With --broker-pid PID (up, verify) the broker side is not <prefix>-brk but
the network namespace of that process, e.g. a broker container's: pslab puts
only its veth end <prefix>-b0 there (10.77.2.2/30, a route to the clients'
10.77.1.0/30, IPv6 off on that veth) and down removes only that veth, never
the namespace. show and down find such a broker side by themselves.

Profiles: ` + strings.Join(netem.BuiltinProfiles(), ", ") + `, or a YAML file
(see docs/netem.md).`,
		Example: `  pslab netem verify wifi-paper --duration 10s
  pslab netem up wifi-paper && pslab netem show && pslab netem down
  pslab netem up wifi-paper --broker-pid $(docker inspect -f '{{.State.Pid}}' pslab-nats-1)`,
	}
	cmd.PersistentFlags().StringVar(&f.prefix, "lab", "pslab", "name of the lab: prefix of its namespaces, interfaces and nft table (as pslab run --lab)")
	addDeprecatedAlias(cmd.PersistentFlags(), "prefix", "lab")
	cmd.PersistentFlags().StringVar(&f.backend, "backend", "auto", "auto, relay, netem or tbf+nftables (auto: the profile's backend key, else see docs/netem.md)")

	up := &cobra.Command{
		Use:   "up PROFILE",
		Short: "Build the namespaces and apply a profile, and leave them up",
		Long: `Remove leftovers of an earlier run, build the namespaces, veths and routes,
apply PROFILE and leave everything up (a relay backend's process too): until ` + "`pslab netem down`" + `, or until
a later pslab run or netem command with the same prefix replaces it (once
this command has exited, the lab counts as a leftover). Prints the backend
used. Run programs in it with ip netns exec <prefix>-cli|<prefix>-brk.

--broker-pid PID: the broker side is the network namespace of process PID
(a container's: docker inspect -f '{{.State.Pid}}' CONTAINER) instead of
<prefix>-brk. Only the veth end <prefix>-b0 with 10.77.2.2/30 and a route to
10.77.1.0/30 is added there; a broker listening on all addresses in it is
then reached from <prefix>-cli at 10.77.2.2 through the router. Refused:
a PID that does not exist, one in pslab's (the host's) own namespace, a
namespace that already has <prefix>-b0 or an address or route in
10.77.1.0/30 or 10.77.2.0/30.`,
		Example: `  pslab netem up wifi-paper
  pslab netem up wifi-paper --broker-pid $(docker inspect -f '{{.State.Pid}}' pslab-nats-1)
  ip netns exec pslab-cli nc -z 10.77.2.2 4222`,
		Args: argsCheck(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error { return netemUp(c, f, args[0]) },
	}
	up.Flags().IntVar(&f.brokerPID, "broker-pid", 0, "put the broker side into this process's network namespace (a container's) instead of <prefix>-brk")
	cmd.AddCommand(up)
	cmd.AddCommand(&cobra.Command{
		Use:     "down",
		Short:   "Remove the namespaces (and the veths, IFB and nft table in them)",
		Long:    "Remove everything `pslab netem up` (or a crashed run) left. Safe to run when nothing is up.\nA broker side in another process's namespace (--broker-pid) loses only the lab's veth; the namespace stays.",
		Example: "  pslab netem down",
		Args:    argsCheck(cobra.NoArgs),
		RunE:    func(c *cobra.Command, _ []string) error { return netemDown(c, f) },
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Show namespaces, addresses, qdiscs, nft rules and counters",
		Long: `Print what the lab has in the kernel now: the namespaces and processes in
them, interfaces with addresses and offload state, qdiscs and filters,
the router's nft rules with their counters, and per-direction counters.`,
		Example: "  pslab netem show",
		Args:    argsCheck(cobra.NoArgs),
		RunE:    func(c *cobra.Command, _ []string) error { return netemShow(c, f) },
	})
	verify := &cobra.Command{
		Use:   "verify PROFILE",
		Short: "Build, apply and measure a profile: goodput and loss per direction",
		Long: `Bring the lab up, apply PROFILE, then measure it: goodput of a bulk TCP
transfer each way (after a warm-up), and loss and one-way delay of UDP probes
with sequence numbers both ways at once, each for --duration. Prints measured
against expected (the rate minus Ethernet+IP+TCP headers per segment, and in
half duplex the ACKs that share the budget) and exits 1 if a direction is
outside --rate-tol or --loss-tol. Takes down the lab unless --keep.
With --broker-pid the broker-side sockets of the measurement are opened in
that process's network namespace (see pslab netem up --help).`,
		Example: `  pslab netem verify wifi-paper --duration 10s
  pslab netem verify my-link.yaml --keep --json
  pslab netem verify wifi-paper --broker-pid $(docker inspect -f '{{.State.Pid}}' pslab-nats-1)`,
		Args: argsCheck(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error { return netemVerify(c, f, args[0]) },
	}
	verify.Flags().DurationVar(&f.duration, "duration", 10*time.Second, "length of each measurement phase (three phases plus warm-ups)")
	verify.Flags().BoolVar(&f.keep, "keep", false, "leave the lab up afterwards")
	verify.Flags().Float64Var(&f.rateTol, "rate-tol", linkinfo.DefaultRateTol, "allowed relative goodput error")
	verify.Flags().Float64Var(&f.lossTol, "loss-tol", linkinfo.DefaultLossTolPts, "allowed loss error, percentage points")
	verify.Flags().BoolVar(&f.asJSON, "json", false, "print the verification as JSON")
	verify.Flags().IntVar(&f.brokerPID, "broker-pid", 0, "put the broker side into this process's network namespace (a container's) instead of <prefix>-brk")
	cmd.AddCommand(verify)
	return cmd
}

func init() { rootCmd.AddCommand(newNetemCmd()) }

// newLab checks the flags and that this process can emulate at all.
func newLab(f netemFlags) (*netem.Lab, error) {
	var b netem.Backend
	switch f.backend {
	case "auto", "":
	case string(netem.BackendNetem), string(netem.BackendTBFNft), string(netem.BackendRelay):
		b = netem.Backend(f.backend)
	default:
		return nil, badInputf("--backend %q: want auto, relay, netem or tbf+nftables", f.backend)
	}
	o := netem.Options{Prefix: f.prefix, Backend: b, BrokerPID: f.brokerPID, DetachedRelay: f.detached}
	if err := netem.CheckOptions(o); err != nil {
		if errors.Is(err, netem.ErrBadBrokerPID) {
			err = fmt.Errorf("--broker-pid: %w", err)
		}
		return nil, badInput(err)
	}
	if err := netem.Supported(); err != nil {
		return nil, fmt.Errorf("%w (pslab netem manages network namespaces: run it as root)", err)
	}
	if o.BrokerPID != 0 {
		if err := netem.CheckBrokerPID(o.BrokerPID); err != nil {
			return nil, badInput(fmt.Errorf("--broker-pid: %w", err))
		}
	}
	return netem.New(o), nil
}

// loadProfile maps profile errors to bad input.
func loadProfile(name string) (netem.Profile, error) {
	p, err := netem.LoadProfile(name)
	if err != nil {
		return p, badInput(err)
	}
	return p, nil
}

// bringUp builds the lab and applies p; a refused profile is bad input and
// leaves nothing behind.
func bringUp(ctx context.Context, l *netem.Lab, p netem.Profile) (netem.Backend, error) {
	if err := l.Up(ctx); err != nil {
		if errors.Is(err, netem.ErrBadBrokerPID) {
			return "", badInput(fmt.Errorf("--broker-pid: %w", err))
		}
		return "", err
	}
	b, err := l.Apply(p)
	if err != nil {
		_ = l.Down()
		if errors.Is(err, netem.ErrUnsupported) {
			return "", badInput(err)
		}
		return "", err
	}
	return b, nil
}

func netemUp(c *cobra.Command, f netemFlags, name string) error {
	f.detached = true // a relay stays up with the lab, until netem down
	p, err := loadProfile(name)
	if err != nil {
		return err
	}
	l, err := newLab(f)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := bringUp(ctx, l, p)
	if err != nil {
		return err
	}
	cli, rtr, brk := l.Namespaces()
	out := c.OutOrStdout()
	fmt.Fprintf(out, "up: %s\nbackend: %s\n", netem.Describe(p), b)
	if f.brokerPID != 0 {
		fmt.Fprintf(out, "clients in netns %s (%s), router %s, broker side: veth %s (%s) in the network namespace of %s\n",
			cli, l.ClientIP(), rtr, l.BrokerInterface(), l.BrokerIP(), brk)
		fmt.Fprintf(out, "try: ip netns exec %s <command> (clients), nsenter -t %d -n <command> (broker side); remove with: pslab netem down%s\n",
			cli, f.brokerPID, prefixFlag(f))
		return nil
	}
	fmt.Fprintf(out, "clients in netns %s (%s), router %s, broker in netns %s (%s)\n", cli, l.ClientIP(), rtr, brk, l.BrokerIP())
	fmt.Fprintf(out, "try: ip netns exec %s <command>; remove with: pslab netem down%s\n", cli, prefixFlag(f))
	return nil
}

// prefixFlag is the --lab to repeat in a hint ("" for the default).
func prefixFlag(f netemFlags) string {
	if f.prefix == "pslab" {
		return ""
	}
	return " --lab " + f.prefix
}

func netemDown(c *cobra.Command, f netemFlags) error {
	if _, err := newLab(f); err != nil { // validates flags and privileges
		return err
	}
	removed, err := netem.Cleanup(f.prefix)
	for _, r := range removed {
		fmt.Fprintf(c.OutOrStdout(), "removed %s\n", r)
	}
	if err == nil && len(removed) == 0 {
		fmt.Fprintln(c.OutOrStdout(), "nothing to remove")
	}
	return err
}

func netemShow(c *cobra.Command, f netemFlags) error {
	l, err := newLab(f)
	if err != nil {
		return err
	}
	st, err := l.Status()
	if err != nil {
		return err
	}
	if !l.IsUp() {
		fmt.Fprintf(c.OutOrStdout(), "the lab (prefix %s) is not up\n", f.prefix)
	}
	fmt.Fprint(c.OutOrStdout(), st)
	return nil
}

func netemVerify(c *cobra.Command, f netemFlags, name string) error {
	if f.duration <= 0 {
		return badInputf("--duration must be positive, got %s", f.duration)
	}
	p, err := loadProfile(name)
	if err != nil {
		return err
	}
	l, err := newLab(f)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := bringUp(ctx, l, p)
	if err != nil {
		return err
	}
	if !f.keep {
		defer l.Down()
	}
	out := c.OutOrStdout()
	if !f.asJSON {
		fmt.Fprintf(out, "verifying %s on backend %s, about %s ...\n", p.Name, b, 3*f.duration+min(f.duration, 5*time.Second)+2*netem.WarmupFor(p, f.duration))
	}
	v, err := l.Verify(ctx, p, f.duration)
	if err != nil {
		return err
	}
	checkErr := v.Check(f.rateTol, f.lossTol)
	if f.asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
	} else {
		fmt.Fprint(out, v)
		fmt.Fprint(out, "router counters over the verification:\n", v.Counters)
		if checkErr == nil {
			fmt.Fprintf(out, "OK: goodput within %.0f %% and loss within %.1f points of the profile in both directions", 100*f.rateTol, f.lossTol)
			if v.RTT != nil {
				fmt.Fprintf(out, ", mean ping RTT within %.0f %% (or 1 ms) of the model's, mean loss runs within 20 %% where checked", 100*f.rateTol)
			}
			fmt.Fprintln(out)
		}
	}
	if f.keep {
		fmt.Fprintln(out, "lab left up; remove with: pslab netem down")
	}
	if checkErr != nil {
		return fmt.Errorf("the link does not match profile %s: %w", p.Name, checkErr)
	}
	return nil
}
