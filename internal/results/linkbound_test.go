package results

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"pslab/netem/linkinfo"
)

func TestLinkBoundByDuplex(t *testing.T) {
	r := &Record{Network: Network{
		Spec:   &linkinfo.Profile{Duplex: "half"},
		Verify: &linkinfo.Verification{ToBroker: linkinfo.DirResult{GoodputKbit: 800}, ToClient: linkinfo.DirResult{GoodputKbit: 400}},
	}}
	// Half duplex: (100 000 + 50 000) / 2 B/s shared by 500 + 250 B.
	b, ok := LinkBound(r, 500, 250)
	assert.True(t, ok)
	assert.InDelta(t, 100.0, b, 1e-9)
	// Full duplex: min(100 000 / 500, 50 000 / 250) = 200.
	r.Network.Spec.Duplex = "full"
	b, _ = LinkBound(r, 500, 250)
	assert.InDelta(t, 200.0, b, 1e-9)
	r.Network.Verify = nil
	_, ok = LinkBound(r, 500, 250)
	assert.False(t, ok, "no verification, no bound")
}
