package netem

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
)

// relayProc is a relay process this Lab started.
type relayProc struct {
	cmd     *exec.Cmd
	cfgW    *os.File // held open: the relay ends when this process does
	done    chan struct{}
	waitErr error
	seed    uint64
	fault   [2]uint64 // DropFault when the current fault was set
}

// relaySocket is the control socket of a link's relay (by its id: the
// lab's prefix for its first link, names.Relay); relayLog its standard
// error.
func relaySocket(prefix string) string { return "/run/pslab-" + prefix + ".relay" }
func relayLog(prefix string) string    { return "/run/pslab-" + prefix + ".relay.log" }

// ErrRelayUnavailable is wrapped when the relay backend cannot be started
// by this program.
var ErrRelayUnavailable = errors.New("relay backend unavailable")

// startRelay starts the relay for p in the router namespace (l.mu held):
// forwarding off in the router, then the relay, then it waits until the
// relay has its sockets (or says why not).
func (l *Lab) startRelay(p Profile) error {
	if !relayCapable {
		return fmt.Errorf("%w: this program does not call netem.RunRelayIfRequested at start, so it cannot be the relay", ErrRelayUnavailable)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRelayUnavailable, err)
	}
	cfg := relayConfig{Prefix: l.n.Relay, Profile: p, CliIf: l.n.RtrCliIf, BrkIf: l.n.RtrBrkIf,
		Socket: relaySocket(l.n.Relay), Detached: l.opts.DetachedRelay, Latency: relayLatencyWanted()}
	cfg.Seed = uint64(p.Seed)
	if p.Seed == 0 {
		cfg.Seed = rand.Uint64() // a fresh seed each time; seed: N pins one
	}
	if p.TraceUp != "" {
		up, err := loadTrace(p, ToBroker)
		if err != nil {
			return err
		}
		down, err := loadTrace(p, ToClient)
		if err != nil {
			return err
		}
		cfg.TraceUp, cfg.TraceDn = up.Ms, down.Ms
	}
	brk, err := l.brokerNS()
	if err != nil {
		return err
	}
	if cfg.CliMAC, err = macOf(l.n.NsCli, l.n.CliIf); err != nil {
		return err
	}
	if cfg.BrkMAC, err = macOf(brk, l.n.BrkIf); err != nil {
		return err
	}
	line, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := l.routerForwards(false); err != nil {
		return fmt.Errorf("router: forwarding off for the relay: %w", err)
	}
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(relayLog(l.n.Relay), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		cfgR.Close()
		cfgW.Close()
		return err
	}
	defer logf.Close()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), relayEnv+"="+l.n.Relay)
	cmd.ExtraFiles = []*os.File{cfgR}
	cmd.Stderr = logf
	// Its own process group: a Ctrl-C at the terminal stops pslab, which
	// then takes the relay down in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cfgR.Close()
		cfgW.Close()
		return err
	}
	if err := inNamedNS(l.n.NsRtr, cmd.Start); err != nil {
		cfgR.Close()
		cfgW.Close()
		return fmt.Errorf("%w: start %s: %v", ErrRelayUnavailable, exe, err)
	}
	cfgR.Close()
	rp := &relayProc{cmd: cmd, cfgW: cfgW, done: make(chan struct{}), seed: cfg.Seed}
	go func() { _, _ = cfgW.Write(append(line, '\n')) }()
	readyc := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		readyc <- strings.TrimSpace(s)
		_, _ = bufio.NewReader(out).WriteTo(discard{})
	}()
	go func() { rp.waitErr = cmd.Wait(); close(rp.done) }()
	var status string
	select {
	case status = <-readyc:
	case <-time.After(10 * time.Second):
		status = "error: no answer in 10 s"
	}
	if !strings.HasPrefix(status, "ready ") {
		_ = cmd.Process.Kill()
		<-rp.done
		cfgW.Close()
		return fmt.Errorf("%w: relay did not start: %s %s", ErrRelayUnavailable, status, tailOf(relayLog(l.n.Relay)))
	}
	if l.opts.DetachedRelay {
		cfgW.Close() // nothing to watch: it lives until Down or Cleanup
		rp.cfgW = nil
	}
	l.relay = rp
	return nil
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// tailOf is the end of a log file, for error messages.
func tailOf(file string) string {
	b, err := os.ReadFile(file)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "(" + file + ": " + strings.TrimSpace(string(b)) + ")"
}

func macOf(ns, dev string) (string, error) {
	var mac string
	err := withHandle(ns, func(h *netlink.Handle) error {
		link, err := h.LinkByName(dev)
		if err != nil {
			return fmt.Errorf("find %s: %w", dev, err)
		}
		mac = link.Attrs().HardwareAddr.String()
		return nil
	})
	return mac, err
}

// stopRelay ends the relay this Lab started, or one another process left
// running for this lab (l.mu held). Then the router forwards again (the
// caller restores what it wants on top).
func (l *Lab) stopRelay() error {
	var errs []error
	if rp := l.relay; rp != nil {
		l.relay = nil
		_, _, _ = queryRelay(l.n.Relay, relayRequest{Op: "stop"})
		select {
		case <-rp.done:
		case <-time.After(2 * time.Second):
			_ = rp.cmd.Process.Kill()
			<-rp.done
		}
		if rp.cfgW != nil {
			rp.cfgW.Close()
		}
	}
	if _, err := killRelays(l.n.Relay); err != nil {
		errs = append(errs, err)
	}
	if namedNSExists(l.n.NsRtr) {
		if err := l.routerForwards(true); err != nil {
			errs = append(errs, fmt.Errorf("router: forwarding back on: %w", err))
		}
	}
	return errors.Join(errs...)
}

// routerForwards turns the router kernel's forwarding of this link's
// packets on or off: per interface (the link's two router veths), so the
// relay of one link leaves another link's forwarding alone. The kernel
// decides by the interface a packet came in on; with it off there, it
// drops the packet silently (no ICMP), and the relay carries it instead.
func (l *Lab) routerForwards(on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	for _, dev := range []string{l.n.RtrCliIf, l.n.RtrBrkIf} {
		if err := writeSysctl(l.n.NsRtr, "/proc/sys/net/ipv4/conf/"+dev+"/forwarding", v); err != nil && !(on && errors.Is(err, os.ErrNotExist)) {
			return err
		}
	}
	return nil
}

// queryRelay asks the lab's relay over its control socket. ok is false
// when there is no relay (no socket).
func queryRelay(prefix string, req relayRequest) (relayState, bool, error) {
	path := relaySocket(prefix)
	if _, err := os.Stat(path); err != nil {
		return relayState{}, false, nil
	}
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return relayState{}, true, fmt.Errorf("relay of lab %s: %w %s", prefix, err, tailOf(relayLog(prefix)))
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return relayState{}, true, fmt.Errorf("relay of lab %s: %w", prefix, err)
	}
	var st relayState
	if err := json.NewDecoder(c).Decode(&st); err != nil {
		return relayState{}, true, fmt.Errorf("relay of lab %s: %w %s", prefix, err, tailOf(relayLog(prefix)))
	}
	if st.Error != "" {
		return st, true, fmt.Errorf("relay of lab %s: %s", prefix, st.Error)
	}
	return st, true, nil
}

// relayCounters reads the relay's counters into c (nothing without a
// relay). A relay this Lab started that has died is an error.
func (l *Lab) relayCounters(c *Counters) error {
	st, ok, err := queryRelay(l.n.Relay, relayRequest{Op: "state"})
	if rp := l.relay; rp != nil && (!ok || err != nil) {
		select {
		case <-rp.done:
			return fmt.Errorf("the relay exited (%v) %s", rp.waitErr, tailOf(relayLog(l.n.Relay)))
		default:
		}
		if !ok {
			return fmt.Errorf("the relay's control socket %s is gone", relaySocket(l.n.Relay))
		}
	}
	if err != nil || !ok {
		return err
	}
	tb, tc := st.Counters[dirToBroker], st.Counters[dirToClient]
	c.ToBroker.Relay, c.ToClient.Relay = &tb, &tc
	return nil
}

// killRelays ends every relay process of this lab (found by their
// environment, in any namespace) and removes their socket and log. It
// says what it removed.
func killRelays(prefix string) ([]string, error) {
	marker := []byte(relayEnv + "=" + prefix + "\x00")
	entries, _ := os.ReadDir("/proc")
	var removed []string
	var errs []error
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, marker) {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill relay %d: %w", pid, err))
			continue
		}
		for i := 0; i < 100 && processAlive(pid); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		removed = append(removed, fmt.Sprintf("relay process %d", pid))
	}
	for _, f := range []string{relaySocket(prefix), relayLog(prefix)} {
		if err := os.Remove(f); err == nil && f == relaySocket(prefix) {
			removed = append(removed, "relay socket "+f)
		}
	}
	return removed, errors.Join(errs...)
}

// processAlive: the process exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
