package results

import (
	"math"

	"pslab/netem/linkinfo"
)

// LinkBound is the most messages per second the emulated link of record
// r can carry when one message puts toBroker bytes (TCP payload) on it on
// the way to the broker and toClient bytes on the way to its subscriber,
// from the TCP goodput the profile's verification measured before the
// run (payload bytes per second, with the profile's loss). On a
// half-duplex profile both directions share one budget (the mean of the
// two goodputs); on a full-duplex one each has its own and the slower
// bounds. With a link per role (Network.Links) the publishers' link
// carries the toBroker bytes and the subscribers' the toClient bytes,
// and a link without a verification (unshaped) bounds nothing. ok is
// false when no link of the record has a verification, or without sizes.
func LinkBound(r *Record, toBroker, toClient int) (bound float64, ok bool) {
	if toBroker <= 0 || toClient <= 0 {
		return 0, false
	}
	n := r.Network
	if len(n.Links) == 0 {
		return linkBound(n.Verify, n.Spec, toBroker, toClient)
	}
	bound = math.Inf(1)
	for _, x := range []struct {
		role          string
		toBroker, toC int
	}{{RolePublishers, toBroker, 0}, {RoleSubscribers, 0, toClient}} {
		l, has := n.RoleLink(x.role)
		if !has {
			continue
		}
		if b, k := linkBound(l.Verify, l.Spec, x.toBroker, x.toC); k {
			bound, ok = math.Min(bound, b), true
		}
	}
	if !ok {
		return 0, false
	}
	return bound, true
}

// linkBound is LinkBound for one link that carries toBroker and toClient
// bytes per message (either may be 0: not on this link).
func linkBound(v *linkinfo.Verification, spec *linkinfo.Profile, toBroker, toClient int) (float64, bool) {
	if v == nil || spec == nil {
		return 0, false
	}
	up := v.ToBroker.GoodputKbit * 1000 / 8
	down := v.ToClient.GoodputKbit * 1000 / 8
	if spec.Duplex == "half" {
		return (up + down) / 2 / float64(toBroker+toClient), true
	}
	bound := math.Inf(1)
	if toBroker > 0 {
		bound = up / float64(toBroker)
	}
	if toClient > 0 {
		bound = math.Min(bound, down/float64(toClient))
	}
	return bound, true
}
