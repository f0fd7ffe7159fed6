package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// interruptWatch notes when ctx ends, in the epoch's clock, and the
// phase the run was in then. The phase is the one the run had entered
// when ctx ended: enter refuses to move on once ctx has ended, so code
// that goes on after the cancellation (the warm-up's wait returns and
// starts the window's clock) does not move the interruption into the
// next phase. The time alone could not say it: the AfterFunc that notes
// it may run after the warm-up has set the window (SIGINT in the warm-up
// was recorded as `phase: window`, 0.0001 s measured).
type interruptWatch struct {
	ctx   context.Context
	at    atomic.Int64 // now() at cancellation; 0 while not cancelled
	stop  func() bool
	mu    sync.Mutex
	phase string // "warmup", "window" or "drain"
}

func watchInterrupt(ctx context.Context) *interruptWatch {
	w := &interruptWatch{ctx: ctx, phase: "warmup"}
	w.stop = context.AfterFunc(ctx, func() { w.at.Store(now()) })
	return w
}

// enter moves the run into phase, unless ctx has ended: then the run was
// interrupted in the phase it is in.
func (w *interruptWatch) enter(phase string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() == nil {
		w.phase = phase
	}
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
	w.mu.Lock()
	phase := w.phase
	w.mu.Unlock()
	ws, we := r.windowStart.Load(), r.windowEnd.Load()
	in := &Interruption{Phase: phase}
	switch phase {
	case "window": // the part before the cancellation was noted
		in.WindowMeasuredS = time.Duration(min(max(at-ws, 0), we-ws)).Seconds()
	case "drain":
		in.WindowMeasuredS = time.Duration(we - ws).Seconds()
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
