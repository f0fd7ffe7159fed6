package report

// The two network profiles the paper compares.
const (
	Wireline = "wireline"   // the paper's fixed wireline network
	Wireless = "wifi-paper" // the paper's emulated 802.11 link
)

// Metrics of the paper's tables, as used in `paper:` keys
// (<metric>_wireline, <metric>_wireless, optionally <key>_corrected).
const (
	PubTput   = "pub_tput"
	SubTput   = "sub_tput"
	LatencyMs = "latency_ms"
)

// PaperColumn maps a network profile to the paper's column suffix:
// "wireline" to "wireline", "wifi-paper" to "wireless". Other profiles have
// no published values.
func PaperColumn(network string) (string, bool) {
	switch network {
	case Wireline:
		return "wireline", true
	case Wireless:
		return "wireless", true
	}
	return "", false
}

// PaperValue is a published value of one metric on one network.
type PaperValue struct {
	Printed   float64 // as printed in the paper
	Corrected float64 // the erratum's reading; equals Printed without one
	HasErrata bool
}

// Value is the value to compare against: the corrected reading.
func (p PaperValue) Value() float64 { return p.Corrected }

// LookupPaper finds the published value of metric (PubTput, SubTput,
// LatencyMs) on a network in a case's `paper:` map.
func LookupPaper(paper map[string]float64, metric, network string) (PaperValue, bool) {
	col, ok := PaperColumn(network)
	if !ok || paper == nil {
		return PaperValue{}, false
	}
	k := metric + "_" + col
	v, ok := paper[k]
	if !ok {
		return PaperValue{}, false
	}
	pv := PaperValue{Printed: v, Corrected: v}
	if c, ok := paper[k+"_corrected"]; ok {
		pv.Corrected, pv.HasErrata = c, true
	}
	return pv, true
}
