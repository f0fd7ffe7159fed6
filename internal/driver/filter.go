package driver

import (
	"fmt"

	"pslab/internal/scenario"
)

// FilterRefusals is a broker's capability table for the filter factor:
// for each filter kind it cannot express, why not. Kinds not in it are
// supported.
type FilterRefusals map[scenario.FilterKind]string

// Check is the reason the broker cannot express f's filters, "" when it can.
func (r FilterRefusals) Check(f scenario.Factors) string {
	if why, ok := r[f.Filter]; ok {
		return fmt.Sprintf("filter %s: %s", f.Filter, why)
	}
	return ""
}
