package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// TestHistogramUniform records 1..100000 µs once each: the q-quantile is
// q*100000 µs and the mean 50000.5 µs, within the 3-digit precision.
func TestHistogramUniform(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	s := h.Summary()
	if s.Count != 100000 {
		t.Fatalf("count %d", s.Count)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"mean", s.MeanMs, 50.0005},
		{"p50", s.P50Ms, 50},
		{"p90", s.P90Ms, 90},
		{"p99", s.P99Ms, 99},
		{"p99.9", s.P999Ms, 99.9},
		{"max", s.MaxMs, 100},
	}
	for _, c := range checks {
		if !near(c.got, c.want, 0.002) {
			t.Errorf("%s = %v ms, want %v ms ±0.2 %%", c.name, c.got, c.want)
		}
	}
	if q := h.Quantile(0.25); !near(float64(q), float64(25*time.Millisecond), 0.002) {
		t.Errorf("Quantile(0.25) = %v", q)
	}
}

// TestHistogramExponential checks percentiles of an exponential distribution
// (mean 2 ms) against the closed form -ln(1-q)*mean, with sampling slack.
func TestHistogramExponential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := NewHistogram()
	const mean = 2.0 // ms
	for i := 0; i < 200000; i++ {
		h.Record(time.Duration(r.ExpFloat64() * mean * 1e6))
	}
	s := h.Summary()
	for _, c := range []struct {
		q   float64
		got float64
	}{{0.5, s.P50Ms}, {0.9, s.P90Ms}, {0.99, s.P99Ms}} {
		want := -math.Log(1-c.q) * mean
		if !near(c.got, want, 0.03) {
			t.Errorf("p%v = %v ms, want %v ms ±3 %%", c.q*100, c.got, want)
		}
	}
	if !near(s.MeanMs, mean, 0.02) {
		t.Errorf("mean %v ms, want %v", s.MeanMs, mean)
	}
}

func TestHistogramClamps(t *testing.T) {
	h := NewHistogram()
	h.Record(-time.Second)
	h.Record(0)
	h.Record(500 * time.Nanosecond)
	h.Record(11 * time.Minute)
	h.Record(time.Millisecond)
	if h.Count() != 5 {
		t.Fatalf("count %d", h.Count())
	}
	low, high := h.Clamped()
	if low != 3 || high != 1 {
		t.Errorf("clamped low %d high %d, want 3 1", low, high)
	}
	s := h.Summary()
	if !near(s.MaxMs, float64(HistogramMax)/1e6, 0.001) {
		t.Errorf("max %v ms", s.MaxMs)
	}
	if !near(s.P50Ms, 0.001, 0.001) {
		t.Errorf("p50 %v ms, want the 1 µs bound", s.P50Ms)
	}
}

func TestHistogramEmpty(t *testing.T) {
	h := NewHistogram()
	if s := h.Summary(); s != (LatencySummary{}) {
		t.Errorf("empty summary %+v", s)
	}
	if h.Quantile(0.5) != 0 {
		t.Error("empty quantile not 0")
	}
}

func TestHistogramMerge(t *testing.T) {
	all, a, b := NewHistogram(), NewHistogram(), NewHistogram()
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50000; i++ {
		d := time.Duration(r.Int64N(int64(time.Second)))
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Record(time.Hour)
	all.Record(time.Hour)
	a.Merge(b)
	if a.Summary() != all.Summary() {
		t.Errorf("merged %+v\nwant   %+v", a.Summary(), all.Summary())
	}
	if _, high := a.Clamped(); high != 1 {
		t.Errorf("clamp counts not merged: high %d", high)
	}
}

func TestHistogramEncodeDecode(t *testing.T) {
	h := NewHistogram()
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 10000; i++ {
		h.Record(time.Duration(r.ExpFloat64() * 3e6))
	}
	h.Record(9 * time.Minute)
	s, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(s) > 20000 {
		t.Errorf("encoding is %d bytes, expected compact", len(s))
	}
	d, err := DecodeHistogram(s)
	if err != nil {
		t.Fatal(err)
	}
	if d.Summary() != h.Summary() {
		t.Errorf("decoded %+v\nwant    %+v", d.Summary(), h.Summary())
	}
	for _, bad := range []string{"", "not base64!", "AAAA", s[:len(s)/2]} {
		if _, err := DecodeHistogram(bad); err == nil {
			t.Errorf("DecodeHistogram(%.20q) accepted", bad)
		}
	}
}

func TestLatencySummaryJSON(t *testing.T) {
	b, err := json.Marshal(LatencySummary{Count: 1, MeanMs: 2, P50Ms: 3, P90Ms: 4, P99Ms: 5, P999Ms: 6, MaxMs: 7})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"count":1,"mean_ms":2,"p50_ms":3,"p90_ms":4,"p99_ms":5,"p999_ms":6,"max_ms":7}`
	if string(b) != want {
		t.Errorf("json %s\nwant %s", b, want)
	}
}

// TestHistogramPrecision: three significant digits near the bottom of the
// range too (NATS on loopback has latencies of tens of µs).
func TestHistogramPrecision(t *testing.T) {
	for _, d := range []time.Duration{time.Microsecond, 2345 * time.Nanosecond, 47310 * time.Nanosecond, 3 * time.Millisecond, 7 * time.Minute} {
		h := NewHistogram()
		h.Record(d)
		if got := h.Quantile(0.5); !near(float64(got), float64(d), 0.001) {
			t.Errorf("%v recorded, median %v", d, got)
		}
	}
}
