package metrics

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ProcSample is one resource sample of a process. CPUPct is the CPU used in
// the interval before T as a percentage of one core (100 = one core busy, 200
// = two); T is seconds since the sampler started.
type ProcSample struct {
	T        float64 `json:"t"`
	CPUPct   float64 `json:"cpu_pct"`
	RSSBytes int64   `json:"rss_bytes"`
	// Goroutines of this process (only for the sampling process itself: the
	// client), to show that a long run does not leak them.
	Goroutines int `json:"goroutines,omitempty"`
	// HeapLiveBytes is the Go heap marked live by the last GC (self only):
	// unlike RSS, it does not include memory the runtime keeps for reuse,
	// so it is what grows when something leaks.
	HeapLiveBytes int64 `json:"heap_live_bytes,omitempty"`
}

// ProcSampler samples the CPU time (utime+stime from /proc/<pid>/stat) and
// resident set size (VmRSS from /proc/<pid>/status) of watched processes
// every interval. A process that disappears stops being sampled; its samples
// so far are kept.
type ProcSampler struct {
	interval time.Duration
	mu       sync.Mutex
	watched  []*procWatch
	cancel   context.CancelFunc
	done     chan struct{}
	result   map[string][]ProcSample
	rounds   atomic.Int64 // sampling rounds done (lets tests wait without timing)
}

type procWatch struct {
	name    string
	pid     int
	ticks   uint64 // utime+stime at the previous sample
	at      time.Time
	ok      bool // baseline read
	gone    bool
	samples []ProcSample
	next    atomic.Int64 // a new PID to follow (a restarted broker), 0 = none
}

// NewProcSampler samples every interval (1 s in runs).
func NewProcSampler(interval time.Duration) *ProcSampler {
	if interval <= 0 {
		interval = time.Second
	}
	return &ProcSampler{interval: interval}
}

// Watch adds a process under a name (e.g. "broker", "client"). Call before
// Start: a process watched later is not sampled (its name maps to no samples).
func (p *ProcSampler) Watch(name string, pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watched = append(p.watched, &procWatch{name: name, pid: pid})
}

// Repoint makes the samples under name follow another process from the
// next sample on (a broker restarted by a fault has a new PID). Safe to
// call while sampling.
func (p *ProcSampler) Repoint(name string, pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.watched {
		if w.name == name {
			w.next.Store(int64(pid))
		}
	}
}

// Start takes the baseline and samples in a goroutine until Stop or ctx ends.
func (p *ProcSampler) Start(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		return
	}
	ctx, p.cancel = context.WithCancel(ctx)
	p.done = make(chan struct{})
	start := time.Now()
	watched := append([]*procWatch(nil), p.watched...)
	for _, w := range watched {
		w.baseline(start)
	}
	go p.loop(ctx, start, watched)
}

func (p *ProcSampler) loop(ctx context.Context, start time.Time, watched []*procWatch) {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, w := range watched {
				w.sample(start, now)
			}
			p.rounds.Add(1)
		}
	}
}

// Stop ends sampling and returns the samples per watched name. Safe to call
// more than once and without Start (then every name has no samples).
func (p *ProcSampler) Stop() map[string][]ProcSample {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.result != nil {
		return p.result
	}
	if p.cancel != nil {
		p.cancel()
		<-p.done
	}
	p.result = make(map[string][]ProcSample, len(p.watched))
	for _, w := range p.watched {
		p.result[w.name] = append(p.result[w.name], w.samples...)
	}
	return p.result
}

func (w *procWatch) baseline(now time.Time) {
	ticks, err := cpuTicksOf(w.pid)
	if err != nil {
		w.gone = true
		return
	}
	w.ticks, w.at, w.ok = ticks, now, true
}

func (w *procWatch) sample(start, now time.Time) {
	if pid := int(w.next.Swap(0)); pid != 0 {
		w.pid, w.gone = pid, false
		w.baseline(now)
		return
	}
	if w.gone {
		return
	}
	ticks, err := cpuTicksOf(w.pid)
	if err != nil {
		w.gone = true
		return
	}
	rss, err := rssOf(w.pid)
	if err != nil {
		w.gone = true
		return
	}
	if dt := now.Sub(w.at).Seconds(); w.ok && dt > 0 && ticks >= w.ticks {
		cpu := float64(ticks-w.ticks) / float64(clockTicks()) / dt * 100
		ps := ProcSample{T: now.Sub(start).Seconds(), CPUPct: cpu, RSSBytes: rss}
		if w.pid == os.Getpid() {
			ps.Goroutines = runtime.NumGoroutine()
			ps.HeapLiveBytes = heapLive()
		}
		w.samples = append(w.samples, ps)
	}
	w.ticks, w.at, w.ok = ticks, now, true
}

// procCPUTicks returns utime+stime (fields 14 and 15 of /proc/<pid>/stat) in
// clock ticks.
func procCPUTicks(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatTicks(b)
}

// parseStatTicks parses a /proc/<pid>/stat line. The command name (field 2)
// is in parentheses and may contain spaces and ')', so fields are counted
// after the last ')'.
func parseStatTicks(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("metrics: malformed stat line")
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return 0, fmt.Errorf("metrics: stat line has %d fields", len(f)+2)
	}
	u, err1 := strconv.ParseUint(string(f[utime]), 10, 64)
	s, err2 := strconv.ParseUint(string(f[stime]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("metrics: bad utime/stime in stat line")
	}
	return u + s, nil
}

// procRSS returns VmRSS from /proc/<pid>/status in bytes.
func procRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseStatusRSS(b)
}

func parseStatusRSS(b []byte) (int64, error) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("metrics: malformed VmRSS line %q", line)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("metrics: malformed VmRSS line %q", line)
		}
		return kb * 1024, nil
	}
	// Kernel threads and zombies have no VmRSS.
	return 0, fmt.Errorf("metrics: no VmRSS in status")
}

var clk struct {
	once sync.Once
	hz   uint64
}

// clockTicks is the kernel's USER_HZ (sysconf(_SC_CLK_TCK)), read from
// AT_CLKTCK in /proc/self/auxv; 100 if that cannot be read.
func clockTicks() uint64 {
	clk.once.Do(func() {
		clk.hz = 100
		b, err := os.ReadFile("/proc/self/auxv")
		if err != nil {
			return
		}
		if hz := auxvClockTicks(b); hz > 0 {
			clk.hz = hz
		}
	})
	return clk.hz
}

// auxvClockTicks finds AT_CLKTCK (17) in a 64-bit native-endian auxv.
func auxvClockTicks(b []byte) uint64 {
	const atClkTck = 17
	for i := 0; i+16 <= len(b); i += 16 {
		k := binary.NativeEndian.Uint64(b[i:])
		v := binary.NativeEndian.Uint64(b[i+8:])
		if k == 0 {
			break
		}
		if k == atClkTck {
			return v
		}
	}
	return 0
}

// PeakRSS is the largest RSS among the samples (0 if none).
func PeakRSS(s []ProcSample) int64 {
	var m int64
	for _, x := range s {
		m = max(m, x.RSSBytes)
	}
	return m
}

// MeanCPU is the mean CPU % over the samples (0 if none). Samples are taken
// at equal intervals, so this is total CPU time over wall time.
func MeanCPU(s []ProcSample) float64 {
	if len(s) == 0 {
		return 0
	}
	var sum float64
	for _, x := range s {
		sum += x.CPUPct
	}
	return sum / float64(len(s))
}

// Cores is the number of CPUs this process can use, the ceiling of a client
// process's CPU % (Cores()*100) when deciding whether it was the bottleneck.
func Cores() int { return runtime.NumCPU() }

// heapLive reads /gc/heap/live:bytes of this process (0 if unsupported).
func heapLive() int64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
