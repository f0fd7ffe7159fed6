package nats

import (
	"testing"

	"pslab/internal/driver"
	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
)

// TestWireBytesAreThePublishersFrames: the bytes a message puts on the
// link are the PUB and MSG frames on the subject the publisher sends to.
func TestWireBytesAreThePublishersFrames(t *testing.T) {
	const prefix = "pslab-tp0abc123-c01-r1"
	plain := drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
	sel := plain
	sel.Selector = true
	for _, f := range []scenario.Factors{plain, sel} {
		subj := natsPubSubjects(driver.PubSpec{Case: driver.CaseSpec{Prefix: prefix, Factors: f}})[0][0]
		pub, msg := wireBytes(prefix, f)
		// "PUB <subject> 100\r\n" + body + "\r\n"; MSG adds " 1" (the sid).
		if want := 4 + len(subj) + 4 + 2 + 100 + 2; pub != want {
			t.Errorf("selector %v: PUB %d bytes, want %d (subject %s)", f.Selector, pub, want, subj)
		}
		if msg != pub+2 {
			t.Errorf("selector %v: MSG %d bytes, want PUB + 2", f.Selector, msg)
		}
	}
}
