package netem

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRelayFloor measures where the round trip the relay adds at 0
// configured delay goes (results/relay-bench): what one thread waking
// another costs on this machine (two threads passing a byte back and forth
// over pipes, on one CPU and on two), and ping round trips through echoes
// of the frames between the router's veths without the link engine: one
// thread in epoll as the relay, one thread per direction blocked in
// recvfrom (the wake-up goes straight to it), the same with SO_BUSY_POLL,
// and one thread spinning on non-blocking reads (no wake-up at all, a core
// busy), against the kernel's own forwarding and the relay itself,
// interleaved. It measures, so it runs only when asked, as root:
//
//	PSLAB_RELAY_FLOOR=1 go test -count=1 -run TestRelayFloor -v ./netem
func TestRelayFloor(t *testing.T) {
	if os.Getenv("PSLAB_RELAY_FLOOR") != "1" {
		t.Skip("measures the machine: set PSLAB_RELAY_FLOOR=1 (root)")
	}
	requireRoot(t)
	var out strings.Builder
	fmt.Fprintf(&out, "| measurement | rep | mean | p50 | p90 |\n|---|---|---|---|---|\n")
	const reps = 3
	for rep := 1; rep <= reps; rep++ {
		for _, same := range []bool{true, false} {
			rtts := pipePingPong(t, 20_000, same)
			what := "pipe ping-pong, two threads on two CPUs (one round trip = two wake-ups)"
			if same {
				what = "pipe ping-pong, two threads on one CPU (one round trip = two wake-ups)"
			}
			fmt.Fprintf(&out, "| %s | %d | %s |\n", what, rep, usStats(rtts))
		}
	}
	l := New(Options{Prefix: testPrefix})
	require.NoError(t, l.Up(t.Context()))
	defer func() { require.NoError(t, l.Down()) }()
	d := 5 * time.Second
	free := Profile{Name: "relay-unlimited", RateKbit: 10_000_000, Duplex: DuplexFull, Backend: string(BackendRelay)}
	wire := Profile{Name: "wireline", Duplex: DuplexFull}
	echoes := []struct {
		name string
		run  func(stop *atomic.Bool, ports [2]*relayPort, out [2]*relayPort) error
	}{
		{"echo without the engine: one thread in epoll (as the relay)", echoEpoll},
		{"echo without the engine: a thread per direction blocked in recvfrom", echoBlocking(0)},
		{"echo without the engine: the same with SO_BUSY_POLL 50 us", echoBlocking(50)},
		{"echo without the engine: one thread spinning on non-blocking reads", echoSpin},
	}
	for rep := 1; rep <= reps; rep++ {
		_, err := l.Apply(wire)
		require.NoError(t, err)
		kernel, err := l.pingPhase(t.Context(), wire, d)
		require.NoError(t, err)
		fmt.Fprintf(&out, "| ping RTT, kernel forwarding | %d | %.0f us | %.0f us | %.0f us |\n", rep, 1000*kernel.MeanMs, 1000*kernel.P50Ms, 1000*kernel.P90Ms)
		_, err = l.Apply(free)
		require.NoError(t, err)
		relay, err := l.pingPhase(t.Context(), free, d)
		require.NoError(t, err)
		fmt.Fprintf(&out, "| ping RTT, relay at 0 delay | %d | %.0f us | %.0f us | %.0f us |\n", rep, 1000*relay.MeanMs, 1000*relay.P50Ms, 1000*relay.P90Ms)
		_, err = l.Apply(wire)
		require.NoError(t, err)
		for _, e := range echoes {
			r := withEcho(t, l, e.run, func() RTTResult {
				r, err := l.pingPhase(t.Context(), wire, d)
				require.NoError(t, err)
				return r
			})
			fmt.Fprintf(&out, "| ping RTT, %s | %d | %.0f us | %.0f us | %.0f us |\n", e.name, rep, 1000*r.MeanMs, 1000*r.P50Ms, 1000*r.P90Ms)
		}
	}
	t.Logf("\n%s", out.String())
}

// pipePingPong passes a byte n times back and forth between two locked
// OS threads blocked in read(2) on pipes (on one CPU or on CPUs 0 and 1)
// and returns each round trip.
func pipePingPong(t *testing.T, n int, sameCPU bool) []time.Duration {
	t.Helper()
	var ab, ba [2]int
	require.NoError(t, unix.Pipe2(ab[:], unix.O_CLOEXEC))
	require.NoError(t, unix.Pipe2(ba[:], unix.O_CLOEXEC))
	defer func() {
		for _, fd := range []int{ab[0], ab[1], ba[0], ba[1]} {
			unix.Close(fd)
		}
	}()
	pin := func(cpu int) {
		var s unix.CPUSet
		s.Set(cpu)
		_ = unix.SchedSetaffinity(0, &s)
	}
	other := 1
	if sameCPU {
		other = 0
	}
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // dies with the goroutine: its affinity goes with it
		pin(other)
		b := make([]byte, 1)
		for range n {
			if _, err := unix.Read(ab[0], b); err != nil {
				break
			}
			_, _ = unix.Write(ba[1], b)
		}
		close(done)
	}()
	rtts := make([]time.Duration, 0, n)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		pin(0)
		b := []byte{1}
		for range n {
			t0 := time.Now()
			if _, err := unix.Write(ab[1], b); err != nil {
				errc <- err
				return
			}
			if _, err := unix.Read(ba[0], b); err != nil {
				errc <- err
				return
			}
			rtts = append(rtts, time.Since(t0))
		}
		errc <- nil
	}()
	require.NoError(t, <-errc)
	<-done
	return rtts
}

func usStats(d []time.Duration) string {
	if len(d) == 0 {
		return "- | - | -"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	q := func(f float64) float64 { return float64(s[int(math.Min(float64(len(s)-1), f*float64(len(s))))]) / 1e3 }
	return fmt.Sprintf("%.1f us | %.1f us | %.1f us", sum/float64(len(s))/1e3, q(0.5), q(0.9))
}

// withEcho runs an echo of the router's frames in this process (its
// sockets made in the router namespace) with the kernel's forwarding off
// on the router's veths, runs measure, and puts everything back.
func withEcho(t *testing.T, l *Lab, run func(stop *atomic.Bool, in, out [2]*relayPort) error, measure func() RTTResult) RTTResult {
	t.Helper()
	var in [2]*relayPort
	err := inNamedNS(l.n.NsRtr, func() error {
		var err error
		for d, dev := range []string{l.n.RtrCliIf, l.n.RtrBrkIf} {
			if in[d], err = openPort(dev, false); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	defer func() {
		for _, p := range in {
			unix.Close(p.fd)
		}
	}()
	cliMAC, err := macOf(l.n.NsCli, l.n.CliIf)
	require.NoError(t, err)
	brkMAC, err := macOf(l.n.NsBrk, l.n.BrkIf)
	require.NoError(t, err)
	out := [2]*relayPort{dirToBroker: in[dirToClient], dirToClient: in[dirToBroker]}
	// Copies: each direction's output port with its own next hop.
	o0, o1 := *out[dirToBroker], *out[dirToClient]
	o0.peerMAC, _ = net.ParseMAC(brkMAC)
	o1.peerMAC, _ = net.ParseMAC(cliMAC)
	out = [2]*relayPort{dirToBroker: &o0, dirToClient: &o1}
	require.NoError(t, l.routerForwards(false))
	defer func() { require.NoError(t, l.routerForwards(true)) }()
	var stop atomic.Bool
	errc := make(chan error, 1)
	go func() { errc <- run(&stop, in, out) }()
	r := measure()
	stop.Store(true)
	require.NoError(t, <-errc)
	return r
}

// echoFrame rewrites a frame read on one port for the other and sends it.
func echoFrame(o *relayPort, frame []byte) {
	copy(frame[vnetHdr:vnetHdr+6], o.peerMAC)
	copy(frame[vnetHdr+6:vnetHdr+12], o.ownMAC)
	_, _ = unix.Write(o.fd, frame)
}

// echoEpoll: one locked thread, epoll on both sockets, as the relay.
func echoEpoll(stop *atomic.Bool, in, out [2]*relayPort) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(ep)
	for _, p := range in {
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, p.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(p.fd)}); err != nil {
			return err
		}
	}
	ev := make([]unix.EpollEvent, 4)
	buf := make([]byte, 65536)
	for !stop.Load() {
		if _, err := unix.EpollWait(ep, ev, 100); err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
		for d, p := range in {
			for {
				n, _, err := unix.Recvfrom(p.fd, buf, 0)
				if err != nil {
					break
				}
				echoFrame(out[d], buf[:n])
			}
		}
	}
	return nil
}

// echoBlocking: a locked thread per direction blocked in recvfrom (a
// receive timeout to see stop), with SO_BUSY_POLL busyUs if not 0.
func echoBlocking(busyUs int) func(stop *atomic.Bool, in, out [2]*relayPort) error {
	return func(stop *atomic.Bool, in, out [2]*relayPort) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for d := range in {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				fd := in[d].fd
				if err := unix.SetNonblock(fd, false); err != nil {
					errs[d] = err
					return
				}
				defer func() { _ = unix.SetNonblock(fd, true) }()
				tv := unix.NsecToTimeval(int64(100 * time.Millisecond))
				if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
					errs[d] = err
					return
				}
				if busyUs > 0 {
					if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, busyUs); err != nil {
						errs[d] = fmt.Errorf("SO_BUSY_POLL: %w", err)
						return
					}
					defer func() { _ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, 0) }()
				}
				buf := make([]byte, 65536)
				for !stop.Load() {
					n, _, err := unix.Recvfrom(fd, buf, 0)
					if err != nil {
						continue
					}
					echoFrame(out[d], buf[:n])
				}
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
}

// echoSpin: one locked thread reading both sockets without ever sleeping.
func echoSpin(stop *atomic.Bool, in, out [2]*relayPort) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, 65536)
	for !stop.Load() {
		for d, p := range in {
			if n, _, err := unix.Recvfrom(p.fd, buf, 0); err == nil {
				echoFrame(out[d], buf[:n])
			}
		}
	}
	return nil
}
