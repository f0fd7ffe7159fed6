// Package artemis is ActiveMQ Artemis in pslab, driven over STOMP 1.2: its
// installation through Maven (install.go), the instance and its process
// (broker.go, settings.go, restart.go, stop.go), the STOMP driver
// (stomp*.go: connections, publishers, subscribers, management, purge,
// what the broker holds), the filter mapping (stomp_filter.go), the access
// probe and login (probe.go), the clean-up of per-lab instances
// (leftovers.go), and the descriptor that registers it all with the
// broker registry (this file).
package artemis

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/driver"
)

// Name is the broker's name in scenarios, flags and records.
const Name = "artemis"

func init() { brokers.Register(Descriptor()) }

// Descriptor describes Artemis to the registry.
func Descriptor() brokers.Descriptor {
	return brokers.Descriptor{
		Name:      Name,
		Summary:   "ActiveMQ Artemis " + DefaultArtemisVersion + " over STOMP 1.2 (installed through Maven on first use)",
		Version:   DefaultArtemisVersion,
		NewBroker: newBroker,
		NewDriver: func(_ context.Context, ep driver.Endpoint) (driver.Driver, error) {
			return NewSTOMP(ep)
		},
		Supports:     SupportsSTOMP,
		Capabilities: brokers.Capabilities{FilterRefusals: FilterRefusals},
		Schemes:      []string{"stomp", "tcp"},
		Probe:        openAccess,
		Install:      install,
		Start:        start,
		Stop:         stop,
		Doctor:       doctor,
		Login:        login,
		Leftovers:    leftovers,
		// docker-compose.yml: the artemis service joins the nats
		// service's network namespace.
		Container: &brokers.Container{Name: "pslab-artemis", Scheme: "stomp", Port: 61613,
			UserVar: "ARTEMIS_USER", PassVar: "ARTEMIS_PASSWORD"},
	}
}

// newBroker makes the Artemis instance of lab labName, installing Artemis
// on first use and stopping an instance an earlier, killed run left.
func newBroker(ctx context.Context, labName string, log io.Writer) (broker.Broker, error) {
	a := NewArtemis(ArtemisConfig{Instance: Instance(labName)})
	if !a.Installed() {
		fmt.Fprintln(log, InstallNote(a, labName))
		if err := a.Install(ctx, log); err != nil {
			return nil, err
		}
	}
	// A pslab killed earlier may have left its broker running.
	if pid, err := a.StopLeftover(ctx); err != nil {
		return nil, err
	} else if pid > 0 {
		fmt.Fprintf(log, "cleanup: stopped Artemis (pid %d) left by an earlier run\n", pid)
	}
	return a, nil
}

// Instance names the Artemis instance of a lab: runs at the same time
// (--lab NAME) each need their own, since a running instance owns its
// journal and ports.
func Instance(labName string) string {
	if labName == "" || labName == "pslab" {
		return "default"
	}
	return "lab-" + labName
}

func install(ctx context.Context, out, log io.Writer) error {
	a := NewArtemis(ArtemisConfig{})
	if a.Installed() {
		fmt.Fprintf(out, "%s %s already installed: %s\n", Name, a.Config().Version, a.InstanceDir())
		return nil
	}
	if err := a.Install(ctx, log); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s %s installed: %s\n", Name, a.Config().Version, a.InstanceDir())
	return nil
}

// start starts the default instance on loopback and leaves it running;
// its PID file lets stop (and the next run) find it.
func start(ctx context.Context, out, log io.Writer) error {
	a := NewArtemis(ArtemisConfig{})
	if !a.Installed() {
		if err := a.Install(ctx, log); err != nil {
			return err
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := a.Start(sctx, broker.LoopbackHost{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s running, pid %d\nurl:      %s\nuser:     %s\npassword: (in %s)\n",
		Name, a.PID(), ep.URL, ep.User, a.CredentialsFile())
	return nil
}

func stop(ctx context.Context, out io.Writer) error {
	pid, err := NewArtemis(ArtemisConfig{}).StopLeftover(ctx)
	if err != nil {
		return err
	}
	if pid == 0 {
		return fmt.Errorf("no running %s of pslab's instance", Name)
	}
	fmt.Fprintf(out, "%s stopped (pid %d)\n", Name, pid)
	return nil
}

// doctor checks Java and Maven (Artemis runs on the one and is fetched
// through the other) and whether Artemis is installed.
func doctor(context.Context) []brokers.Check {
	var out []brokers.Check
	if v, err := exec.Command("java", "-version").CombinedOutput(); err != nil {
		out = append(out, brokers.Check{Status: "missing", What: "java", Detail: "Artemis needs Java 17+: apt-get install openjdk-17-jre-headless"})
	} else {
		out = append(out, brokers.Check{Status: "ok", What: "java", Detail: firstLine(string(v))})
	}
	if v, err := exec.Command("mvn", "-v").CombinedOutput(); err != nil {
		out = append(out, brokers.Check{Status: "missing", What: "maven", Detail: "Artemis is fetched through Maven: apt-get install maven"})
	} else {
		out = append(out, brokers.Check{Status: "ok", What: "maven", Detail: firstLine(stripANSI(string(v)))})
	}
	a := NewArtemis(ArtemisConfig{})
	if a.Installed() {
		out = append(out, brokers.Check{Status: "ok", What: Name, Detail: "installed in " + a.InstanceDir()})
	} else {
		out = append(out, brokers.Check{Status: "info", What: Name, Detail: "not installed; `pslab broker install artemis` (or the first `pslab run` with artemis) installs it"})
	}
	return out
}

// firstLine is the first line of s, surrounding space removed.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// InstallNote says what installing a just-created Artemis will do:
// the first use installs the distribution, a new lab name only creates
// its own instance (the distribution is cached).
func InstallNote(a *Artemis, labName string) string {
	if a.HomeInstalled() {
		return fmt.Sprintf("creating the Artemis %s instance of lab %s (pslab clean removes it once unused) ...", a.Config().Version, labName)
	}
	return fmt.Sprintf("installing Artemis %s (first use) ...", a.Config().Version)
}

// NotAtHand says what is missing for an install without the network
// (neither the unpacked distribution nor its tarball in the local Maven
// repository), "" when Install needs no download.
func (a *Artemis) NotAtHand() string {
	if _, err := os.Stat(filepath.Join(a.HomeDir(), "bin", "artemis")); err == nil {
		return ""
	}
	if _, err := os.Stat(a.localRepoTarball()); err == nil {
		return ""
	}
	return fmt.Sprintf("no %s, no %s", a.HomeDir(), a.localRepoTarball())
}
