package netem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// TraceOpportunityBytes is what one delivery opportunity of a
// Mahimahi trace carries: Mahimahi's PACKET_SIZE, 1504 bytes of IP packet
// (its TUN payload). A packet bigger than what is left of an opportunity
// goes on in the next one; what an opportunity cannot use (the queue ran
// empty) is lost.
const TraceOpportunityBytes = 1504

// maxTraceLines bounds a trace file (Mahimahi's own traces are a few
// hundred thousand lines).
const maxTraceLines = 10_000_000

// Trace is a Mahimahi link trace: each line is a time in milliseconds at
// which the link may deliver TraceOpportunityBytes; several lines with
// the same time are several opportunities. The trace repeats with the
// period of its last time.
type Trace struct {
	Ms     []int64 // non-decreasing, last > 0
	Source string  // file name
}

// ParseTrace reads a Mahimahi trace. Errors name the file and line: an
// empty file, a line that is not a non-negative integer, times going back,
// a last time of 0.
func ParseTrace(file string, data []byte) (*Trace, error) {
	t := &Trace{Source: file}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	var errs []error
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if line > maxTraceLines {
			return nil, fmt.Errorf("%w: %s:%d: more than %d lines", ErrBadProfile, file, line, maxTraceLines)
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s:%d: %q is not a time in milliseconds (a non-negative integer)", ErrBadProfile, file, line, s))
			if len(errs) >= 10 {
				break
			}
			continue
		}
		if n := len(t.Ms); n > 0 && v < t.Ms[n-1] {
			errs = append(errs, fmt.Errorf("%w: %s:%d: %d ms is before the previous line's %d ms (a trace's times never go back)", ErrBadProfile, file, line, v, t.Ms[n-1]))
			continue
		}
		t.Ms = append(t.Ms, v)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %s: %v", ErrBadProfile, file, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(t.Ms) == 0 {
		return nil, fmt.Errorf("%w: %s:1: empty trace (want one time in ms per line)", ErrBadProfile, file)
	}
	if t.Ms[len(t.Ms)-1] == 0 {
		return nil, fmt.Errorf("%w: %s:%d: the last time is 0 ms: a trace needs a period above 0", ErrBadProfile, file, line)
	}
	return t, nil
}

// PeriodMs is the trace's period.
func (t *Trace) PeriodMs() int64 { return t.Ms[len(t.Ms)-1] }

// MeanKbit is the trace's mean rate in kbit/s of IP packets.
func (t *Trace) MeanKbit() float64 {
	return float64(len(t.Ms)) * TraceOpportunityBytes * 8 / float64(t.PeriodMs())
}

// opportunitiesBefore counts the opportunities in [0, ns) from the start of
// the trace (ns relative to it), over repetitions.
func (t *Trace) opportunitiesBefore(ns int64) int64 {
	if ns <= 0 {
		return 0
	}
	period := t.PeriodMs() * 1e6
	k := ns / period
	r := ns % period
	// index of the first opportunity at or after r within a period
	i := sort.Search(len(t.Ms), func(i int) bool { return t.Ms[i]*1e6 >= r })
	return k*int64(len(t.Ms)) + int64(i)
}

// traceServer walks a trace from a base time: opportunity number n (from
// 0, counting over repetitions) is at base + (n / len) periods + Ms[n % len].
type traceServer struct {
	t    *Trace
	base int64
	n    int64 // the next opportunity not yet used or skipped
}

func (s *traceServer) at(n int64) int64 {
	l := int64(len(s.t.Ms))
	return s.base + (n/l)*s.t.PeriodMs()*1e6 + s.t.Ms[n%l]*1e6
}

// next is the time of the next opportunity at or after t (skipping the
// ones before t: an opportunity with nothing to send is lost).
func (s *traceServer) next(t int64) int64 {
	if at := s.at(s.n); at >= t {
		return at
	}
	// opportunitiesBefore may count one too many at a period's edge
	// (the last line's time is also the next period's start): step back
	// one and walk.
	s.n = max(s.n, s.t.opportunitiesBefore(t-s.base)-1)
	for s.at(s.n) < t {
		s.n++
	}
	return s.at(s.n)
}
