package metrics

import (
	"context"
	"encoding/binary"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestProcSamplerSelf burns CPU in a goroutine and samples this process: it
// must see CPU > 0 and RSS > 0. No timing asserts: it just waits until a few
// samples exist.
func TestProcSamplerSelf(t *testing.T) {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		x := 1.0
		for !stop.Load() {
			for i := 0; i < 1e5; i++ {
				x = x*1.0000001 + 1e-9
			}
		}
		runtime.KeepAlive(x)
	}()
	p := NewProcSampler(50 * time.Millisecond)
	p.Watch("self", os.Getpid())
	p.Watch("nobody", 1<<30) // no such pid: no samples, no failure
	p.Start(context.Background())
	for deadline := time.Now().Add(60 * time.Second); p.rounds.Load() < 5; {
		if time.Now().After(deadline) {
			t.Fatal("sampler made fewer than 5 rounds in 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop.Store(true)
	<-done
	got := p.Stop()
	self := got["self"]
	if len(self) == 0 {
		t.Fatal("no samples of this process")
	}
	if MeanCPU(self) <= 0 {
		t.Errorf("mean CPU %v%% while a goroutine spins", MeanCPU(self))
	}
	if PeakRSS(self) <= 0 {
		t.Errorf("peak RSS %d", PeakRSS(self))
	}
	if len(got["nobody"]) != 0 {
		t.Errorf("samples of a missing pid: %v", got["nobody"])
	}
	if again := p.Stop(); len(again["self"]) != len(self) {
		t.Error("second Stop differs")
	}
	t.Logf("%d samples, mean CPU %.0f%%, peak RSS %d MB", len(self), MeanCPU(self), PeakRSS(self)>>20)
}

func TestProcSamplerStopWithoutStart(t *testing.T) {
	p := NewProcSampler(time.Second)
	p.Watch("x", os.Getpid())
	if got := p.Stop(); len(got["x"]) != 0 {
		t.Errorf("samples without Start: %v", got)
	}
}

func TestParseStatTicks(t *testing.T) {
	line := []byte("1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 1 0 100 1000 50 18446744073709551615\n")
	got, err := parseStatTicks(line)
	if err != nil || got != 281 {
		t.Errorf("parseStatTicks = %d, %v; want 281", got, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 2"} {
		if _, err := parseStatTicks([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestParseStatusRSS(t *testing.T) {
	status := []byte("Name:\tx\nVmPeak:\t  9999 kB\nVmRSS:\t   12345 kB\nThreads:\t3\n")
	got, err := parseStatusRSS(status)
	if err != nil || got != 12345*1024 {
		t.Errorf("parseStatusRSS = %d, %v", got, err)
	}
	if _, err := parseStatusRSS([]byte("Name:\tkthreadd\n")); err == nil {
		t.Error("status without VmRSS accepted")
	}
}

func TestAuxvClockTicks(t *testing.T) {
	var b []byte
	for _, kv := range [][2]uint64{{6, 4096}, {17, 250}, {0, 0}} {
		b = binary.NativeEndian.AppendUint64(b, kv[0])
		b = binary.NativeEndian.AppendUint64(b, kv[1])
	}
	if got := auxvClockTicks(b); got != 250 {
		t.Errorf("auxvClockTicks = %d", got)
	}
	if hz := clockTicks(); hz == 0 {
		t.Error("clockTicks 0")
	}
}

func TestPeakAndMean(t *testing.T) {
	s := []ProcSample{{T: 1, CPUPct: 50, RSSBytes: 10}, {T: 2, CPUPct: 150, RSSBytes: 30}, {T: 3, CPUPct: 100, RSSBytes: 20}}
	if PeakRSS(s) != 30 || MeanCPU(s) != 100 {
		t.Errorf("peak %d mean %v", PeakRSS(s), MeanCPU(s))
	}
	if PeakRSS(nil) != 0 || MeanCPU(nil) != 0 {
		t.Error("empty not 0")
	}
	if Cores() < 1 {
		t.Error("no cores")
	}
}

// TestProcSamplerRepoint: a watch that lost its process (a killed broker)
// follows the new one after Repoint; samples of this process carry its
// goroutine count.
func TestProcSamplerRepoint(t *testing.T) {
	p := NewProcSampler(20 * time.Millisecond)
	p.Watch("x", 1<<30) // gone from the start
	p.Watch("self", os.Getpid())
	p.Start(context.Background())
	waitRounds := func(n int64) {
		for deadline := time.Now().Add(60 * time.Second); p.rounds.Load() < n; {
			if time.Now().After(deadline) {
				t.Fatalf("sampler made fewer than %d rounds in 60 s", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitRounds(2)
	p.Repoint("x", os.Getpid())
	waitRounds(p.rounds.Load() + 4)
	got := p.Stop()
	if len(got["x"]) == 0 {
		t.Fatal("no samples after Repoint")
	}
	if g := got["self"][0].Goroutines; g < 2 {
		t.Errorf("goroutines of this process: %d", g)
	}
}
