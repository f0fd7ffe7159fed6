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

// TestLinkBoundPerRole: with a link per role the publishers' link carries
// what goes to the broker and the subscribers' what comes back; an
// unverified (unshaped) link bounds nothing.
func TestLinkBoundPerRole(t *testing.T) {
	half := &linkinfo.Profile{Duplex: "half"}
	full := &linkinfo.Profile{Duplex: "full"}
	ver := &linkinfo.Verification{ToBroker: linkinfo.DirResult{GoodputKbit: 800}, ToClient: linkinfo.DirResult{GoodputKbit: 400}}
	r := &Record{Network: Network{Links: []RoleLink{
		{Role: RolePublishers, Spec: half, Verify: ver},
		{Role: RoleSubscribers, Spec: full},
	}}}
	// Publishers on half duplex: (100 000 + 50 000) / 2 B/s for 500 B
	// each; the subscribers' unshaped link bounds nothing.
	b, ok := LinkBound(r, 500, 250)
	assert.True(t, ok)
	assert.InDelta(t, 150.0, b, 1e-9)
	// Subscribers on a verified full-duplex link too: 50 000 / 250 = 200
	// does not bind below 150; at 1000 B per delivery it does (50).
	r.Network.Links[1].Verify = ver
	b, _ = LinkBound(r, 500, 250)
	assert.InDelta(t, 150.0, b, 1e-9)
	b, _ = LinkBound(r, 500, 1000)
	assert.InDelta(t, 50.0, b, 1e-9)
	r.Network.Links[0].Verify, r.Network.Links[1].Verify = nil, nil
	_, ok = LinkBound(r, 500, 250)
	assert.False(t, ok, "no verified link, no bound")
}
