package load

import "pslab/internal/record"

// The result of a case run is the record's (internal/record): load fills
// these types, the analysis side reads them without importing load.
type (
	Result       = record.Result
	PacerStats   = record.PacerStats
	Counts       = record.Counts
	Accounting   = record.Accounting
	Drain        = record.Drain
	Steady       = record.Steady
	FaultResult  = record.FaultResult
	Interruption = record.Interruption
)

// Drain reasons (record.Drain.Ended).
const (
	DrainComplete  = record.DrainComplete
	DrainStalled   = record.DrainStalled
	DrainBound     = record.DrainBound
	DrainCancelled = record.DrainCancelled
)
