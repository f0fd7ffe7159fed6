package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestProgressCountsTheWholeRunAndItsTime(t *testing.T) {
	p := repsPlan(2, 3, 0, false)
	p.Brokers = []string{"nats", "artemis"}
	p.Networks = []string{"wireline", "wifi-paper"}
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	pr := newProgress(p, p.Networks, t0)
	_, _, least, most := pr.left()
	assert.Equal(t, 24, least, "2 cases x 3 reps x 2 brokers x 2 networks")
	assert.Equal(t, 24, most, "no CI target: the minimum is all")

	s := newSchedule(p, Options{}, "nats", "wireline", 1)
	pr.begin("wireline", "nats", s)
	r, _ := s.next()
	rec := repRecord(r.c.ID, r.nextRep(), 1, 1, "")
	r.add(&rec)
	pr.ran("wireline", t0.Add(20*time.Second))
	l, m, runs, _ := pr.left()
	assert.Equal(t, 23, runs)
	assert.Equal(t, l, m)
	// 11 wireline runs at the measured 20 s, 12 wifi-paper runs at the
	// estimate (warm-up + window + drain of the defaults + 3 s).
	c := p.Cases[0]
	est := c.Warmup + c.Window + c.Drain + overheadEstimate
	assert.Equal(t, 11*20*time.Second+12*est, l)
	line := pr.line(t0.Add(20 * time.Second))
	assert.True(t, strings.HasPrefix(line, "[1/24] elapsed 20s, left "), line)
	assert.Contains(t, line, "ETA")

	p.CITarget, p.MaxReps = 0.05, 5
	pr = newProgress(p, p.Networks, t0)
	_, _, least, most = pr.left()
	assert.Equal(t, 24, least)
	assert.Equal(t, 40, most, "up to the bound of 5 each")
	assert.Contains(t, pr.line(t0), "at most 40")
}

func TestFmtDur(t *testing.T) {
	assert.Equal(t, "42s", fmtDur(42*time.Second))
	assert.Equal(t, "5m07s", fmtDur(5*time.Minute+7*time.Second))
	assert.Equal(t, "21h24m", fmtDur(21*time.Hour+24*time.Minute))
}
