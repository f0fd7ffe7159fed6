package results

// LinkBound is the most messages per second the emulated link of record
// r can carry when one message puts toBroker bytes (TCP payload) on it on
// the way to the broker and toClient bytes on the way to its subscriber,
// from the TCP goodput the profile's verification measured before the
// run (payload bytes per second, with the profile's loss). On a
// half-duplex profile both directions share one budget (the mean of the
// two goodputs); on a full-duplex one each has its own and the slower
// bounds. ok is false when the record has no verification or sizes.
func LinkBound(r *Record, toBroker, toClient int) (bound float64, ok bool) {
	v, spec := r.Network.Verify, r.Network.Spec
	if v == nil || spec == nil || toBroker <= 0 || toClient <= 0 {
		return 0, false
	}
	up := v.ToBroker.GoodputKbit * 1000 / 8
	down := v.ToClient.GoodputKbit * 1000 / 8
	if spec.Duplex == "half" {
		return (up + down) / 2 / float64(toBroker+toClient), true
	}
	return min(up/float64(toBroker), down/float64(toClient)), true
}
