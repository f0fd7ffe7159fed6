package netem

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRelayBenchmark measures the relay backend (issue 33, item 4): the
// highest rate it carries with no rate limit and no delay, the CPU the
// relay process uses carrying bulk TCP at 1, 10 and 50 Mbit/s, and the
// round trip it adds at 0 configured delay (pings through the relay
// against pings through the kernel's own forwarding). It measures, so it
// runs only when asked, as root:
//
//	PSLAB_RELAY_BENCH=1 go test -count=1 -run TestRelayBenchmark -v ./netem
//
// and prints a Markdown table (results/relay-bench/README.md).
func TestRelayBenchmark(t *testing.T) {
	if b := os.Getenv("PSLAB_RELAY_BENCH"); b != "1" && b != "rtt" {
		t.Skip("measures the relay: set PSLAB_RELAY_BENCH=1 (root; rtt: the round trips alone)")
	}
	requireRoot(t)
	l := New(Options{Prefix: testPrefix})
	require.NoError(t, l.Up(t.Context()))
	defer l.Down()
	d := 5 * time.Second
	reps := 3
	var out strings.Builder
	fmt.Fprintf(&out, "| measurement | rep | value | relay CPU (%% of one core) |\n|---|---|---|---|\n")

	// Round trip at 0 delay: kernel forwarding, then the relay without a
	// rate limit (10 Gbit/s, the profile maximum, is no limit here), the
	// relay on every CPU, on the pinger's CPU, and on the other one. The
	// pinger (this process) runs on CPU 0, as pslab run's clients do.
	const unlimitedKbit = 10_000_000 // the profile maximum
	free := Profile{Name: "relay-unlimited", RateKbit: unlimitedKbit, Duplex: DuplexFull, Backend: string(BackendRelay)}
	restore := pinThreads(t, os.Getpid(), []int{0})
	placements := []struct {
		name string
		cpus []int
	}{{"every CPU", nil}, {"CPU 0 (the pinger's)", []int{0}}, {"CPU 1 (the other)", []int{1}}}
	for rep := 1; rep <= reps; rep++ {
		_, err := l.Apply(Profile{Name: "wireline", Duplex: DuplexFull})
		require.NoError(t, err)
		kernel, err := l.pingPhase(t.Context(), Profile{Name: "wireline"}, d)
		require.NoError(t, err)
		fmt.Fprintf(&out, "| ping RTT, kernel forwarding | %d | mean %.3f ms, p50 %.3f ms (%d pings) | |\n", rep, kernel.MeanMs, kernel.P50Ms, kernel.Received)
		t.Setenv(relayLatencyEnv, "1") // the relay times its reads and writes (relay_latency.go)
		_, err = l.Apply(free)
		require.NoError(t, err)
		os.Unsetenv(relayLatencyEnv)
		pids := relayPids(t)
		require.Len(t, pids, 1)
		for _, pl := range placements {
			if pl.cpus != nil {
				pinThreads(t, pids[0], pl.cpus)
			}
			relay, err := l.pingPhase(t.Context(), free, d)
			require.NoError(t, err)
			st, _, err := queryRelay(l.n.Relay, relayRequest{Op: "latency"})
			require.NoError(t, err)
			lat := st.Latency
			fmt.Fprintf(&out, "| ping RTT, relay at 0 delay on %s | %d | mean %.3f ms, p50 %.3f ms: adds %.0f us (mean), %.0f us (p50); "+
				"relay's read after the kernel's receive stamp: request %.0f us (mean, median bucket <= %d), reply %.0f us (<= %d); write %.0f / %.0f us | |\n",
				pl.name, rep, relay.MeanMs, relay.P50Ms, 1000*(relay.MeanMs-kernel.MeanMs), 1000*(relay.P50Ms-kernel.P50Ms),
				lat.ReadDelay[dirToBroker].MeanUs(), lat.ReadDelay[dirToBroker].MedianUs(),
				lat.ReadDelay[dirToClient].MeanUs(), lat.ReadDelay[dirToClient].MedianUs(),
				lat.Write[dirToBroker].MeanUs(), lat.Write[dirToClient].MeanUs())
		}
	}
	restore()
	if os.Getenv("PSLAB_RELAY_BENCH") == "rtt" {
		t.Logf("\n%s", out.String())
		return
	}
	// Goodput and CPU: bulk TCP to the broker side (4 connections).
	for _, rate := range []float64{unlimitedKbit, 1000, 10_000, 50_000} {
		p := Profile{Name: "relay-bench", RateKbit: rate, Duplex: DuplexFull, Backend: string(BackendRelay), QueueMs: 100}
		for rep := 1; rep <= reps; rep++ {
			_, err := l.Apply(p)
			require.NoError(t, err)
			pids := relayPids(t)
			require.Len(t, pids, 1)
			cpu0, t0 := cpuTicks(t, pids[0]), time.Now()
			r, err := l.tcpPhase(t.Context(), ToBroker, 2*time.Second, d)
			require.NoError(t, err)
			cpu1, t1 := cpuTicks(t, pids[0]), time.Now()
			pct := 100 * float64(cpu1-cpu0) / 100 / t1.Sub(t0).Seconds() // 100 ticks a second
			what := fmt.Sprintf("TCP goodput at %g Mbit/s", rate/1000)
			if rate == unlimitedKbit {
				what = "TCP goodput, no rate limit"
			}
			fmt.Fprintf(&out, "| %s | %d | %.1f Mbit/s | %.1f |\n", what, rep, float64(r.Bytes)*8/r.Seconds/1e6, pct)
		}
	}
	t.Logf("\n%s", out.String())
}

// cpuTicks is a process's user+system CPU time in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ut + st
}

// pinThreads confines every thread of pid to cpus and returns what puts
// their previous set back.
func pinThreads(t *testing.T, pid int, cpus []int) func() {
	t.Helper()
	var set, before unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	require.NoError(t, unix.SchedGetaffinity(pid, &before))
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	require.NoError(t, err)
	for _, e := range tasks {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			_ = unix.SchedSetaffinity(tid, &set)
		}
	}
	return func() {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, e := range tasks {
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				_ = unix.SchedSetaffinity(tid, &before)
			}
		}
	}
}
