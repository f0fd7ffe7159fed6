package lab

import (
	"context"
	"errors"
	"time"

	"pslab/internal/results"
)

// The interruption model: the run's context ends at the user's first
// SIGINT or SIGTERM. A case interrupted before anything was measured
// (waiting for the link, purging, connecting) writes no record; one
// interrupted while it measured is recorded with what was measured, its
// result marked Interrupted and flagged "interrupted", and reports count
// it neither as a result nor as a failed repetition. Clean-up after an
// interruption (closing, purging) is bounded by interruptedCleanup.

// interruptedCleanup bounds each clean-up step once the run is interrupted.
const interruptedCleanup = time.Second

// cleanupContext is the context for clean-up work after a case: unbounded
// by the run's context normally (the clean-up must happen), bounded by
// interruptedCleanup once the run is interrupted (the user waits for the
// exit; the next run purges what is left).
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() != nil {
		return context.WithTimeout(context.Background(), interruptedCleanup)
	}
	return context.WithCancel(context.Background())
}

// interruptedFlag marks a record whose case was interrupted while it was
// measured, and says how much of it was.
func interruptedFlag(rec *results.Record) results.Flag {
	in := rec.Result.Interrupted
	return results.NewFlag(results.FlagInterrupted, "in the %s, %.1f of %.1f s of the window measured; not a result", in.Phase, in.WindowMeasuredS, rec.Settings.WindowS)
}

// errNotMeasured ends a case run that was interrupted before anything was
// measured: it writes no record.
var errNotMeasured = errors.New("interrupted before anything was measured")
