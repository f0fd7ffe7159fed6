package report

import (
	"fmt"
	"strings"
)

// The result of a claims check, as every report format prints it. The
// claims themselves (which conclusions, how each is evaluated) live in
// package report/claims; a check of other claims (another paper's) fills
// the same types.

// Verdict of a claim on one source of numbers.
type Verdict string

// Verdicts.
const (
	Holds         Verdict = "holds"
	DoesNotHold   Verdict = "does not hold"
	Inconclusive  Verdict = "inconclusive"
	NotMeasurable Verdict = "not measurable"
)

// PaperSource names the paper's own printed values as a source: every
// claim is also evaluated on them, which checks that the claim's rule
// says what the paper's numbers say.
const PaperSource = "paper"

// ClaimsCheck is the claims of one paper evaluated on a dataset.
type ClaimsCheck struct {
	// Tolerance is the relative difference below which two single numbers
	// (the paper's values) count as similar, and above which one beats the
	// other; Alpha is the level of the tests on measurements.
	Tolerance, Alpha float64
	// Notes are what a reader must know before the verdicts (e.g. what a
	// factor meant on a broker).
	Notes  []string
	Claims []Claim
	// PaperValues: the records carry published values (without them the
	// paper column says nothing and is left out).
	PaperValues bool
	// Brokers are the sources of a check on other records than the
	// dataset's (the claims on capacity rows); nil: the dataset's brokers.
	Brokers []string
	// Anchor prefixes the claims' anchors in the report ("claim" when
	// empty): a report holds two checks whose claims share ids.
	Anchor string
	// EqualLoad: two offered loads within this fraction of each other
	// count as equal (claims on latency at equal offered load).
	EqualLoad float64
	// ShowSkipped: a claim none of whose comparisons could be made is
	// shown (with why) rather than only listed as not measurable.
	ShowSkipped bool
}

// BrokersOf are the check's brokers: its own, else the dataset's.
func (c ClaimsCheck) BrokersOf(d *Dataset) []string {
	if c.Brokers != nil {
		return c.Brokers
	}
	return d.Brokers
}

// AnchorOf is the anchor of one of the check's claims.
func (c ClaimsCheck) AnchorOf(id string) string {
	if c.Anchor == "" {
		return "claim-" + id
	}
	return c.Anchor + "-" + id
}

// Shown are the claims worth a row: those some source could evaluate.
// The others are listed by Unmeasured.
func (c ClaimsCheck) Shown() []Claim {
	var out []Claim
	for _, cl := range c.Claims {
		if c.shows(cl) {
			out = append(out, cl)
		}
	}
	return out
}

func (c ClaimsCheck) shows(cl Claim) bool {
	if cl.Measurable(c.PaperValues) {
		return true
	}
	for _, o := range cl.ByBroker {
		if c.ShowSkipped && len(o.Skipped) > 0 {
			return true
		}
	}
	return false
}

// Unmeasured are the ids of the claims no source could evaluate.
func (c ClaimsCheck) Unmeasured() []string {
	var out []string
	for _, cl := range c.Claims {
		if !c.shows(cl) {
			out = append(out, cl.ID)
		}
	}
	return out
}

// Claim is one of the paper's qualitative conclusions, evaluated on the
// paper's values and on each broker's measurements.
type Claim struct {
	ID        string
	Statement string // the claim in the paper's terms
	Source    string // where the paper says it
	Rule      string // how it is evaluated here
	Needs     string // which cases it needs
	Paper     Outcome
	Brokers   []string
	ByBroker  map[string]Outcome
}

// Measurable: some broker (or, with paper values, the paper) has items.
func (c Claim) Measurable(paperValues bool) bool {
	if paperValues && c.Paper.Verdict != NotMeasurable {
		return true
	}
	for _, b := range c.Brokers {
		if c.ByBroker[b].Verdict != NotMeasurable {
			return true
		}
	}
	return false
}

// Outcome is a claim evaluated on one source.
type Outcome struct {
	Verdict Verdict
	Support int    // items that agree (the test holds, for measurements)
	Against int    // measured items whose test does not hold
	Total   int    // items evaluated
	Reason  string // for NotMeasurable: what is missing
	Items   []Item
	Skipped []string // comparisons that could not be made, with the reason
	Flagged int      // items involving records with flags
	Quick   bool     // some numbers come from --quick runs
}

// Item is one comparison behind a claim: a pair of cases, one case on two
// networks, or a curve.
type Item struct {
	Key      string  // identifies the comparison across sources
	Label    string  // e.g. "gaddah-kunz-set1 05↔07 wireline"
	Value    float64 // the compared quantity, usually a ratio
	Text     string  // the numbers behind it
	Supports bool    // the item agrees with the claim (the test holds, for measurements)
	Flags    []string
	// Test is the statistical verdict on measured repetitions (empty on
	// the paper's values, which are single numbers); P its p-value (the
	// smaller, the stronger the evidence for the claim); Evidence the
	// repetitions and deliveries per record behind it.
	Test     TestVerdict
	P        float64
	Evidence string
}

// Summary of an outcome for tables: "holds (14/16)", or for
// measurements "inconclusive (5 hold, 2 do not, 9 inconclusive of 16)".
func (o Outcome) Summary() string {
	if o.Verdict == NotMeasurable {
		return string(o.Verdict)
	}
	s := fmt.Sprintf("%s (%d/%d)", o.Verdict, o.Support, o.Total)
	if o.Tested() {
		s = fmt.Sprintf("%s (%d hold, %d do not, %d inconclusive of %d)", o.Verdict, o.Support, o.Against, o.Total-o.Support-o.Against, o.Total)
	}
	var notes []string
	if o.Flagged > 0 {
		notes = append(notes, fmt.Sprintf("%d flagged", o.Flagged))
	}
	if o.Quick {
		notes = append(notes, "quick")
	}
	if len(notes) > 0 {
		s += " [" + strings.Join(notes, ", ") + "]"
	}
	return s
}

// Tested: the items carry statistical tests (measurements).
func (o Outcome) Tested() bool {
	for _, it := range o.Items {
		if it.Test != "" {
			return true
		}
	}
	return false
}

// Mark is the table mark of an item's verdict: ✓ agrees with the claim,
// ✗ does not, ? inconclusive.
func (it Item) Mark() string {
	switch {
	case it.Test == TestInconclusive:
		return "?"
	case it.Supports:
		return "✓"
	}
	return "✗"
}

// Sources are the paper (when the records carry its values) and the
// brokers, in table order.
func (c ClaimsCheck) Sources(brokers []string) []string {
	if c.PaperValues {
		return append([]string{PaperSource}, brokers...)
	}
	return append([]string(nil), brokers...)
}

// Outcome is the claim's outcome on a source (PaperSource or a broker).
func (c Claim) Outcome(source string) Outcome {
	if source == PaperSource {
		return c.Paper
	}
	return c.ByBroker[source]
}

// ItemKeys are the comparisons of the claim over the sources, in order of
// first appearance: the rows of its detail table.
func (c Claim) ItemKeys(sources []string) []string {
	var keys []string
	seen := map[string]bool{}
	for _, s := range sources {
		for _, it := range c.Outcome(s).Items {
			if !seen[it.Key] {
				seen[it.Key] = true
				keys = append(keys, it.Key)
			}
		}
	}
	return keys
}
