package metrics

import (
	"io"
	"net"
	"sort"
	"time"
)

// Floor is the machine's timer and scheduling resolution as a latency
// measurement sees it: how late a goroutine wakes from a short sleep, and
// the round trip of a small message over a loopback TCP connection
// between two goroutines of this process. Differences of latency smaller
// than these are the machine's, not a broker's.
type Floor struct {
	SleepP50, SleepP99       time.Duration // wake-up overshoot of a FloorSleep sleep
	LoopbackP50, LoopbackP99 time.Duration // 32-byte round trip over loopback TCP
	Samples                  int
}

// FloorSleep is the sleep MeasureFloor times.
const FloorSleep = 200 * time.Microsecond

// MeasureFloor measures the floor with n sleeps and n round trips (about
// n × 0.3 ms: 1000 take a third of a second). The loopback part is left
// zero when no loopback connection can be made.
func MeasureFloor(n int) Floor {
	f := Floor{Samples: n}
	over := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		time.Sleep(FloorSleep)
		over = append(over, max(time.Since(t)-FloorSleep, 0))
	}
	f.SleepP50, f.SleepP99 = quantile(over, 0.5), quantile(over, 0.99)
	if rtt := loopbackRTTs(n); len(rtt) > 0 {
		f.LoopbackP50, f.LoopbackP99 = quantile(rtt, 0.5), quantile(rtt, 0.99)
	}
	return f
}

// loopbackRTTs times n round trips of 32 bytes to an echoing goroutine
// over 127.0.0.1; nil when the connection cannot be made.
func loopbackRTTs(n int) []time.Duration {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil
	}
	defer c.Close()
	buf := make([]byte, 32)
	out := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if _, err := c.Write(buf); err != nil {
			return out
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return out
		}
		out = append(out, time.Since(t))
	}
	return out
}

// quantile of xs (sorted in place), the nearest rank.
func quantile(xs []time.Duration, q float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}
