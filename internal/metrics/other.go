package metrics

import (
	"context"
	"time"
)

// OtherCPU measures, over d, the CPU the machine's processes used besides
// pids (% of one core; 100 × cores is the whole machine): the load from
// outside a run that would compete with it (another lab, a build, a test
// run). A pid that cannot be read counts as using nothing.
func OtherCPU(ctx context.Context, d time.Duration, pids ...int) (float64, error) {
	ticks := func() (uint64, error) {
		m, err := machineBusyTicks()
		if err != nil {
			return 0, err
		}
		for _, p := range pids {
			if p <= 0 {
				continue
			}
			if t, err := procCPUTicks(p); err == nil {
				m -= min(t, m)
			}
		}
		return m, nil
	}
	before, err := ticks()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	after, err := ticks()
	if err != nil {
		return 0, err
	}
	secs := time.Since(start).Seconds()
	if after < before || secs <= 0 {
		return 0, nil
	}
	return float64(after-before) / float64(clockTicks()) / secs * 100, nil
}
