package metrics

import (
	"sync"
	"sync/atomic"
	"time"
)

// SeriesMaxSeconds bounds a Series (about 12 days); later events are counted
// in Late instead of growing the series without bound.
const SeriesMaxSeconds = 1 << 20

const chunkSeconds = 64

type chunk [chunkSeconds]atomic.Int64

// Series counts events per second since a start time. Add is safe for
// concurrent use (atomics, no lock on the hot path); the series grows as
// needed.
type Series struct {
	start  time.Time
	mu     sync.Mutex // serializes growth
	chunks atomic.Pointer[[]*chunk]
	last   atomic.Int64 // highest second index added to, -1 if none
	early  atomic.Int64
	late   atomic.Int64
}

// NewSeries starts a series at start (second 0 is [start, start+1s)).
func NewSeries(start time.Time) *Series {
	s := &Series{start: start}
	empty := []*chunk{}
	s.chunks.Store(&empty)
	s.last.Store(-1)
	return s
}

// Add counts n events d after the start (a duration, not a time.Time:
// callers on the per-message path keep their own monotonic clock). Events
// before the start are counted in Early, events at or after
// SeriesMaxSeconds in Late.
func (s *Series) Add(d time.Duration, n int64) {
	if d < 0 {
		s.early.Add(n)
		return
	}
	i := int64(d / time.Second)
	if i >= SeriesMaxSeconds {
		s.late.Add(n)
		return
	}
	cs := *s.chunks.Load()
	ci := int(i / chunkSeconds)
	if ci >= len(cs) {
		cs = s.grow(ci)
	}
	cs[ci][i%chunkSeconds].Add(n)
	for {
		l := s.last.Load()
		if i <= l || s.last.CompareAndSwap(l, i) {
			break
		}
	}
}

func (s *Series) grow(ci int) []*chunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := *s.chunks.Load()
	if ci < len(cs) {
		return cs
	}
	n := max(ci+1, 2*len(cs))
	grown := make([]*chunk, n)
	copy(grown, cs)
	for k := len(cs); k < n; k++ {
		grown[k] = new(chunk)
	}
	s.chunks.Store(&grown)
	return grown
}

// Start is the time of second 0.
func (s *Series) Start() time.Time { return s.start }

// Values returns the count of every second from 0 to the last second that
// had an event (empty if none).
func (s *Series) Values() []int64 {
	return s.values(s.last.Load() + 1)
}

// ValuesUntil returns the counts of every second from 0 through the second
// containing t, so trailing seconds without events are present as zeros.
func (s *Series) ValuesUntil(t time.Time) []int64 {
	d := t.Sub(s.start)
	if d < 0 {
		return []int64{}
	}
	return s.values(min(int64(d/time.Second)+1, SeriesMaxSeconds))
}

func (s *Series) values(n int64) []int64 {
	out := make([]int64, n)
	cs := *s.chunks.Load()
	for i := range out {
		ci := i / chunkSeconds
		if ci >= len(cs) {
			break
		}
		out[i] = cs[ci][i%chunkSeconds].Load()
	}
	return out
}

// Early is the number of events added with a time before the start.
func (s *Series) Early() int64 { return s.early.Load() }

// Late is the number of events added beyond SeriesMaxSeconds.
func (s *Series) Late() int64 { return s.late.Load() }
