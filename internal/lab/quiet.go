package lab

import (
	"context"
	"fmt"
	"os"
	"time"

	"pslab/internal/metrics"
)

// quietSample is how long each look at the machine's other load lasts.
const quietSample = 500 * time.Millisecond

// waitQuiet waits (Options.QuietWait at most) until processes outside the
// run use less than the machine-busy flag's share of the machine, before
// a case on an unshaped path: there the broker and the clients are bound
// by their CPUs, and another program's burst moves the result (the first
// capacity pilots on this 2-core machine found core NATS 1/1/1 sustaining
// 125 k msg/s while others used 140 % of it, and 1 M msg/s alone). Over
// an emulated link the link bounds the load: no wait. The record keeps
// the wait (phases.quiet_wait_s); a machine still busy after it is
// measured anyway, and flagged machine-busy as usual.
func (cr *caseRun) waitQuiet(ctx context.Context) error {
	if cr.o.QuietWait <= 0 || cr.nw.profile.Shaped() {
		return nil
	}
	start := time.Now()
	limit := otherBusy * float64(metrics.Cores()) * 100
	for {
		other, err := metrics.OtherCPU(ctx, quietSample, os.Getpid(), cr.b.PID())
		if ctx.Err() != nil {
			return errNotMeasured
		}
		if err != nil || other < limit || time.Since(start) >= cr.o.QuietWait {
			break
		}
	}
	cr.rec.Phases.QuietWaitS = time.Since(start).Seconds()
	if w := cr.rec.Phases.QuietWaitS; w > 2*quietSample.Seconds() && cr.o.Verbose {
		fmt.Fprintf(cr.o.Log, "    waited %.1f s for a quiet machine\n", w)
	}
	return nil
}
