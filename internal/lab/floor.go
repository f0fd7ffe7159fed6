package lab

import (
	"fmt"
	"io"
	"time"

	"pslab/internal/metrics"
	"pslab/internal/results"
)

// floorSamples is how many sleeps and loopback round trips measure the
// latency floor at the start of a run under a policy (about 0.3 s).
const floorSamples = 1000

// measureFloor measures the machine's latency floor (timer and
// scheduling resolution) where the clients run, once per run: it is
// written into every record and is the absolute floor of the latency CI
// targets at fixed loads (docs/capacity.md).
func measureFloor(log io.Writer) *results.LatencyFloor {
	f := metrics.MeasureFloor(floorSamples)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	lf := &results.LatencyFloor{SleepP50Us: us(f.SleepP50), SleepP99Us: us(f.SleepP99),
		LoopbackP50Us: us(f.LoopbackP50), LoopbackP99Us: us(f.LoopbackP99), Samples: f.Samples}
	lf.FloorMs = max(lf.SleepP50Us, lf.LoopbackP99Us) / 1e3
	fmt.Fprintf(log, "latency floor: sleep overshoot p50 %.0f µs p99 %.0f µs, loopback round trip p50 %.0f µs p99 %.0f µs: floor %.3f ms\n",
		lf.SleepP50Us, lf.SleepP99Us, lf.LoopbackP50Us, lf.LoopbackP99Us, lf.FloorMs)
	return lf
}
