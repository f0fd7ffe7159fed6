package lab

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers"
	"pslab/internal/brokers/fake"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// cancelOnPhase is a progress log that cancels the run (as the first
// SIGINT does) from the measuring goroutine itself, at the first verbose
// line of phase: the moment the run's code goes on right after the
// cancellation, where a phase boundary was once taken for the
// interruption's time.
type cancelOnPhase struct {
	mu     sync.Mutex
	b      strings.Builder
	phase  string
	cancel context.CancelFunc
}

func (w *cancelOnPhase) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.HasPrefix(strings.TrimSpace(string(p)), w.phase+" ") {
		w.cancel()
	}
	return len(p), nil
}

// TestInterruptedPhaseIsTheTrueOne: a run interrupted in its warm-up, its
// window or its drain records that phase, with no window measured in the
// warm-up, part of it in the window and all of it in the drain. The
// warm-up is tried three times: the old code took the interruption's time
// from a callback that ran after the warm-up had already started the
// window, and recorded SIGINT during the warm-up as `phase: window` with
// 0.0001 s of the window measured (3 of 3 tries).
func TestInterruptedPhaseIsTheTrueOne(t *testing.T) {
	for _, tc := range []struct {
		phase                  string
		warmup, window, drain  time.Duration
		dropEvery              int
		minWindowS, maxWindowS float64
		tries                  int
	}{
		{phase: "warmup", warmup: time.Hour, window: time.Hour, drain: time.Second, maxWindowS: 0, tries: 3},
		{phase: "window", warmup: 100 * time.Millisecond, window: time.Hour, drain: time.Second, minWindowS: 0.5, maxWindowS: 3600, tries: 1},
		{phase: "drain", warmup: 100 * time.Millisecond, window: 300 * time.Millisecond, drain: time.Hour, dropEvery: 3, minWindowS: 0.3, maxWindowS: 0.3, tries: 1},
	} {
		t.Run(tc.phase, func(t *testing.T) {
			for try := 0; try < tc.tries; try++ {
				c := fakeCase("ph", scenario.NonDurable)
				c.Warmup, c.Window, c.Drain = tc.warmup, tc.window, tc.drain
				reg := &brokers.Registry{}
				reg.Register(fake.Descriptor(fake.Knobs{DropEvery: tc.dropEvery}))
				s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{fake.Name}, Networks: []string{"wireline"}, Reps: 1, Cases: []scenario.Case{c}}
				ctx, cancel := context.WithCancel(context.Background())
				log := &cancelOnPhase{phase: tc.phase, cancel: cancel}
				o := Options{Out: t.TempDir(), Log: log, Verbose: true, Registry: reg, LabName: "labph"}
				p, err := MakePlan(s, o)
				require.NoError(t, err)
				_, _ = Run(ctx, p, o) // the case is the last: Run may end without an error
				cancel()
				recs, err := results.Read(o.Out)
				require.NoError(t, err, log.b.String())
				require.Len(t, recs, 1)
				require.True(t, recs[0].Interrupted(), "%+v", recs[0].Flags)
				in := recs[0].Result.Interrupted
				assert.Equal(t, tc.phase, in.Phase, "try %d: %+v", try, in)
				assert.GreaterOrEqual(t, in.WindowMeasuredS, tc.minWindowS, "try %d", try)
				assert.LessOrEqual(t, in.WindowMeasuredS, tc.maxWindowS, "try %d", try)
			}
		})
	}
}
