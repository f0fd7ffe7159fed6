package mosquitto

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"pslab/internal/brokers"
)

// PinnedVersion is the Mosquitto pslab is measured with (Debian 12's
// package); another version runs, and doctor says so.
const PinnedVersion = "2.0.11"

// Install installs Debian's mosquitto package (apt-get install -y
// mosquitto, with apt-get update first when the package is unknown), as
// pslab installs Artemis through Maven on first use. Debian starts and
// enables the package's own broker service (on 127.0.0.1:1883, anonymous
// clients allowed from loopback); pslab does not use it, so when pslab
// installed the package it stops and disables that service and says so.
func Install(ctx context.Context, out, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	if _, err := Binary(); err == nil {
		v, _ := BinaryVersion()
		fmt.Fprintf(out, "mosquitto %s already installed\n", v)
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("mosquitto is not installed and installing it needs root: run `apt-get install -y mosquitto` as root, or pslab as root")
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return fmt.Errorf("mosquitto is not installed and there is no apt-get: install Mosquitto %s with the system's package manager", PinnedVersion)
	}
	install := func() error {
		fmt.Fprintln(log, "mosquitto: apt-get install -y --no-install-recommends mosquitto")
		cmd := exec.CommandContext(ctx, apt, "install", "-y", "--no-install-recommends", "mosquitto")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = log, log
		return cmd.Run()
	}
	if err := install(); err != nil {
		fmt.Fprintln(log, "mosquitto: apt-get update (the package lists may be missing or stale)")
		upd := exec.CommandContext(ctx, apt, "update")
		upd.Stdout, upd.Stderr = log, log
		if uerr := upd.Run(); uerr != nil {
			return fmt.Errorf("mosquitto install: apt-get install failed (%v) and apt-get update failed (%v)", err, uerr)
		}
		if err := install(); err != nil {
			return fmt.Errorf("mosquitto install: apt-get install -y mosquitto: %w", err)
		}
	}
	if _, err := Binary(); err != nil {
		return fmt.Errorf("mosquitto install: apt-get succeeded but %w", err)
	}
	if stopped := stopSystemService(ctx); stopped != "" {
		fmt.Fprintln(out, stopped)
	}
	v, _ := BinaryVersion()
	fmt.Fprintf(out, "mosquitto %s installed (Debian package); pslab starts its own brokers from it\n", v)
	return nil
}

// stopSystemService stops and disables the mosquitto service the package
// started, when systemd runs it; it returns what it did ("" for nothing).
func stopSystemService(ctx context.Context) string {
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		return "" // no systemd: the package's init script start was refused or is not pslab's concern
	}
	if exec.CommandContext(ctx, "systemctl", "is-active", "--quiet", "mosquitto").Run() != nil {
		return ""
	}
	if out, err := exec.CommandContext(ctx, "systemctl", "disable", "--now", "mosquitto").CombinedOutput(); err != nil {
		return fmt.Sprintf("mosquitto: the package started its own service, and `systemctl disable --now mosquitto` failed: %v: %s", err, firstLine(string(out)))
	}
	return "mosquitto: stopped and disabled the broker service Debian's package started (anonymous clients on 127.0.0.1:1883); pslab runs its own brokers with a password"
}

// doctor checks that Mosquitto is installed, its version, and whether a
// broker pslab did not start serves the MQTT port on loopback.
func doctor(context.Context) []brokers.Check {
	var out []brokers.Check
	v, err := BinaryVersion()
	switch {
	case err != nil:
		out = append(out, brokers.Check{Status: "info", What: Name, Detail: "not installed; `pslab broker install mosquitto` (or the first `pslab run` with mosquitto, as root) installs Debian's package"})
	case v != PinnedVersion:
		out = append(out, brokers.Check{Status: "limited", What: Name, Detail: fmt.Sprintf("mosquitto %s installed; results in this repository were measured with %s", v, PinnedVersion)})
	default:
		out = append(out, brokers.Check{Status: "ok", What: Name, Detail: "mosquitto " + v})
	}
	if pids := systemMosquittos(); len(pids) > 0 {
		out = append(out, brokers.Check{Status: "info", What: Name + " service", Detail: fmt.Sprintf("a Mosquitto pslab did not start runs (pid %s), e.g. Debian's service on 127.0.0.1:1883; pslab does not use it (`systemctl disable --now mosquitto` stops it)", strings.Join(pids, ", "))})
	}
	if stale := staleDirs(); len(stale) > 0 {
		out = append(out, brokers.Check{Status: "info", What: Name + " leftovers", Detail: fmt.Sprintf("%d run directories of runs that ended without stopping their broker (e.g. %s); the next run with mosquitto removes them", len(stale), stale[0])})
	}
	return out
}

// systemMosquittos are the pids of mosquitto processes not started from a
// pslab run directory.
func systemMosquittos() []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) == 0 || !strings.HasSuffix(args[0], "/mosquitto") && args[0] != "mosquitto" {
			continue
		}
		if strings.Contains(string(b), "/"+runPrefix) {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}
