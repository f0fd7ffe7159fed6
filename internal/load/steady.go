package load

import (
	"context"
	"fmt"
	"time"
)

// Steady-state criterion of the warm-up: the window starts once the
// deliveries of the last span and of the span before it differ by at most
// steadyTolerance of their mean (both non-zero). The span is a second, or
// half the configured warm-up when that is shorter (at least
// minSteadySpan), so the check can hold at the configured warm-up's end.
// The warm-up lasts at least the configured one and at most that plus
// max(warm-up, steadyExtraMin); a warm-up that never levels off is flagged
// not-steady.
const (
	steadyTolerance = 0.20
	steadyExtraMin  = 3 * time.Second
	minSteadySpan   = 250 * time.Millisecond
)

// steadySpan is the span the warm-up's delivery rate is counted over.
func steadySpan(warmup time.Duration) time.Duration {
	return max(min(time.Second, warmup/2), minSteadySpan)
}

// levelled tells whether two consecutive span counts differ by at most
// steadyTolerance of their mean.
func levelled(before, after int64) bool {
	if before <= 0 || after <= 0 {
		return false
	}
	d := float64(after - before)
	if d < 0 {
		d = -d
	}
	return d <= steadyTolerance*float64(before+after)/2
}

// warmUp waits out the warm-up, sets the window (from the warm-up's end,
// for Window) and returns when the window starts. With faults scheduled
// (timed from the configured warm-up) or no warm-up, it is not extended.
func (r *run) warmUp(ctx context.Context, start time.Time, t0 int64) time.Time {
	c := r.cfg.Case
	st := &r.acct.Steady
	span := steadySpan(c.Warmup)
	st.SpanS = span.Seconds()
	limit := c.Warmup
	if c.Warmup > 0 && len(c.Faults) == 0 {
		limit += max(c.Warmup, steadyExtraMin)
	}
	// Delivered counts sampled every tick, to count the last two spans.
	type sample struct {
		at time.Duration
		n  int64
	}
	var samples []sample
	countSince := func(at time.Duration) int64 { // deliveries since the last sample at or before at
		for i := len(samples) - 1; i >= 0; i-- {
			if samples[i].at <= at {
				return samples[len(samples)-1].n - samples[i].n
			}
		}
		return -1
	}
	check := func() bool {
		el := time.Since(start)
		samples = append(samples, sample{el, r.received()})
		if el < c.Warmup {
			return false
		}
		if c.Warmup <= 0 {
			st.Why = "no warm-up configured"
			return true
		}
		all, after := countSince(el-2*span), countSince(el-span)
		if all < 0 {
			return false
		}
		st.RateBefore, st.RateAfter = float64(all-after)/span.Seconds(), float64(after)/span.Seconds()
		st.Levelled = levelled(all-after, after)
		return st.Levelled
	}
	if !r.waitUntil(ctx, start.Add(limit), start, check) && !st.Levelled && st.Why == "" {
		st.Why = fmt.Sprintf("the delivery rate had not levelled off (within %.0f %% over two %.2f s spans) after %.1f s: %.0f then %.0f msg/s",
			steadyTolerance*100, span.Seconds(), limit.Seconds(), st.RateBefore, st.RateAfter)
		if len(c.Faults) > 0 {
			st.Why += " (warm-up not extended: the case schedules faults)"
		}
	}
	ws := now()
	r.windowEnd.Store(ws + int64(c.Window))
	r.windowStart.Store(ws)
	r.acct.WarmupS = float64(ws-t0) / 1e9
	return epoch.Add(time.Duration(ws))
}

// inWindow tells whether a message stamped at t (monotonic ns) was sent
// inside the window.
func (r *run) inWindow(t int64) bool {
	return t >= r.windowStart.Load() && t < r.windowEnd.Load()
}
