package plot

import "pslab/internal/results"

// warmupOf is the warm-up of r as run (it ends when the delivery rate has
// levelled off), or as configured for records that do not say.
func warmupOf(r *results.Record) float64 {
	if r.Result != nil && r.Result.WarmupS > 0 {
		return r.Result.WarmupS
	}
	return r.Settings.WarmupS
}
