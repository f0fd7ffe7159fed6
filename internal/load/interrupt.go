package load

import (
	"context"
	"sync/atomic"
	"time"
)

// interruptWatch notes when ctx ends, in the epoch's clock.
type interruptWatch struct {
	ctx  context.Context
	at   atomic.Int64 // now() at cancellation; 0 while not cancelled
	stop func() bool
}

func watchInterrupt(ctx context.Context) *interruptWatch {
	w := &interruptWatch{ctx: ctx}
	w.stop = context.AfterFunc(ctx, func() { w.at.Store(now()) })
	return w
}

// of returns the interruption of r, or nil when ctx did not end before the
// case was measured.
func (w *interruptWatch) of(r *run) *Interruption {
	w.stop()
	at := w.at.Load()
	if at == 0 {
		if w.ctx.Err() == nil {
			return nil
		}
		at = now() // cancelled, and the AfterFunc has not run yet: just now
	}
	ws, we := r.windowStart.Load(), r.windowEnd.Load()
	in := &Interruption{Phase: "drain", WindowMeasuredS: time.Duration(we - ws).Seconds()}
	switch {
	case at < ws:
		in.Phase, in.WindowMeasuredS = "warmup", 0
	case at < we:
		in.Phase, in.WindowMeasuredS = "window", time.Duration(at-ws).Seconds()
	}
	return in
}

// closeBoundFor is how long closing waits: closeBound normally, a second
// once the run is interrupted (the user is waiting for the exit).
func closeBoundFor(ctx context.Context) time.Duration {
	if ctx.Err() != nil {
		return time.Second
	}
	return closeBound
}
