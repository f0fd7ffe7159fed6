// Package metrics holds pslab's measurement primitives: latency HDR
// histograms, per-second event series, /proc resource sampling of processes,
// and the Student-t confidence interval used to decide when a case has had
// enough repetitions.
package metrics

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range and precision: 1 µs .. 10 min, 3 significant digits.
const (
	HistogramMin    = time.Microsecond
	HistogramMax    = 10 * time.Minute
	HistogramDigits = 3
)

// Histogram is a latency HDR histogram recording nanoseconds. Values outside
// [HistogramMin, HistogramMax] (including negative ones) are clamped to the
// nearest bound and counted. Not safe for concurrent use: keep one per
// subscriber and Merge them.
type Histogram struct {
	h         *hdr.Histogram
	clampLow  int64
	clampHigh int64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: newHDR()}
}

// newHDR records nanoseconds with a lowest discernible value of 1 ns, so the
// 3 significant digits hold across the whole 1 µs .. 10 min range (a lowest
// discernible value of 1 µs would give only 512 ns steps up to 1 ms).
func newHDR() *hdr.Histogram {
	return hdr.New(1, int64(HistogramMax), HistogramDigits)
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	switch {
	case d < HistogramMin:
		h.clampLow++
		d = HistogramMin
	case d > HistogramMax:
		h.clampHigh++
		d = HistogramMax
	}
	// In range by construction; RecordValue cannot fail.
	_ = h.h.RecordValue(int64(d))
}

// Merge adds every value of o into h.
func (h *Histogram) Merge(o *Histogram) {
	h.h.Merge(o.h) // same geometry: nothing can be dropped
	h.clampLow += o.clampLow
	h.clampHigh += o.clampHigh
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Clamped returns how many recorded values were below HistogramMin (low) and
// above HistogramMax (high) and were recorded as those bounds. The counts are
// not part of Encode's snapshot.
func (h *Histogram) Clamped() (low, high int64) { return h.clampLow, h.clampHigh }

// Quantile returns the value at quantile q (0..1); 0 when empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.h.ValueAtQuantile(q * 100))
}

// LatencySummary is the latency part of a result record, in milliseconds.
// Values carry the histogram's 3-significant-digit precision; percentiles are
// the highest value equivalent to the recorded ones. All zero when Count is 0.
type LatencySummary struct {
	Count  int64   `json:"count"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
}

func ms(ns float64) float64 { return ns / 1e6 }

// Summary computes mean and percentiles.
func (h *Histogram) Summary() LatencySummary {
	n := h.Count()
	if n == 0 {
		return LatencySummary{}
	}
	return LatencySummary{
		Count:  n,
		MeanMs: ms(h.h.Mean()),
		P50Ms:  ms(float64(h.h.ValueAtQuantile(50))),
		P90Ms:  ms(float64(h.h.ValueAtQuantile(90))),
		P99Ms:  ms(float64(h.h.ValueAtQuantile(99))),
		P999Ms: ms(float64(h.h.ValueAtQuantile(99.9))),
		MaxMs:  ms(float64(h.h.Max())),
	}
}

// Encode returns the histogram as base64 text of the HdrHistogram V2
// compressed encoding (readable by any HdrHistogram implementation; values
// are nanoseconds).
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("metrics: encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram reads what Encode wrote (or any V2 compressed histogram
// whose values fit the range). Clamp counts are not part of the encoding.
func DecodeHistogram(s string) (*Histogram, error) {
	d, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("metrics: decode histogram: %w", err)
	}
	h := NewHistogram()
	if dropped := h.h.Merge(d); dropped != 0 {
		return nil, fmt.Errorf("metrics: decode histogram: %d values outside %v..%v", dropped, HistogramMin, HistogramMax)
	}
	return h, nil
}
