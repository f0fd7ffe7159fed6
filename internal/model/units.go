package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseTime reads a time per message: a number with unit s, ms, us, µs or
// ns; a bare number is in microseconds (the unit pslab prints costs in).
// It returns seconds.
func ParseTime(s string) (float64, error) {
	t := strings.TrimSpace(s)
	unit := 1e-6
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6}, {"ms", 1e-3}, {"s", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, unit = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("time %q: want a number with unit s, ms, us or ns (bare numbers are µs)", s)
	}
	return v * unit, nil
}
