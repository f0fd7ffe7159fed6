package nats

import (
	"pslab/internal/driver"
	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The subject root is short, fixed-width, a valid single NATS token, the
// same for the same case run and different for the next repetition.
func TestNATSRootIsShortAndPerCaseRun(t *testing.T) {
	a := natsRoot("pslab-tq3x1k9ab-c01-r1")
	assert.Len(t, a, 8)
	assert.True(t, strings.HasPrefix(a, "p"))
	assert.NotContains(t, a, ".")
	assert.Equal(t, a, natsRoot("pslab-tq3x1k9ab-c01-r1"))
	seen := map[string]string{}
	for _, p := range []string{"pslab-tq3x1k9ab-c01-r1", "pslab-tq3x1k9ab-c01-r2", "pslab-tq3x1k9ab-c02-r1", "pslab-tq3x1k9ac-c01-r1"} {
		r := natsRoot(p)
		require.NotContains(t, seen, r, "%s and %s share a root", p, seen[r])
		seen[r] = p
	}
	// the value scripts/compare-nats-bench.sh computes in Python for this prefix
	assert.Equal(t, "p"+padBase36(fnv1a64("pslab-tq3x1k9ab-c01-r1")), a)
}

// Every subject a publisher sends to lies inside the case's stream
// (root.>), and a subscriber's plain subject is the publisher's.
func TestNATSSubjectsUnderTheRoot(t *testing.T) {
	f := drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
	s := driver.PubSpec{Case: driver.CaseSpec{Prefix: "pslab-x-c01-r1", Factors: f}}
	subj := natsPubSubjects(s)[0][0]
	assert.Equal(t, natsRoot("pslab-x-c01-r1")+".t0", subj)
	assert.Equal(t, subj, subject("pslab-x-c01-r1", 0, -1))
	f.Selector = true
	assert.True(t, strings.HasPrefix(natsSubjectFor("pslab-x-c01-r1", f, 0, 3), natsRoot("pslab-x-c01-r1")+"."))
}

// fnv1a64 and padBase36 restate natsRoot's hash independently (as the
// benchmark script does), so a change of the hash shows here.
func fnv1a64(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

func padBase36(h uint64) string {
	h %= 36 * 36 * 36 * 36 * 36 * 36 * 36
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	out := []byte("0000000")
	for i := 6; i >= 0 && h > 0; i-- {
		out[i] = digits[h%36]
		h /= 36
	}
	return string(out)
}
