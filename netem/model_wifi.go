package netem

import (
	"math"
	"math/rand/v2"
)

// Default 802.11 frame overheads, in bytes (IEEE 802.11-2020, 9.3.2.1 and
// 9.3.1.4): a data frame carries the IP packet behind a 24-byte MAC
// header and an 8-byte LLC/SNAP header, and ends in a 4-byte FCS; an ACK
// frame is 14 bytes.
const (
	wifiMACBytes = 24 + 8 + 4
	wifiACKBytes = 14
)

// wifiModel is the 802.11 DCF as a server of frames on one shared medium:
// each attempt to send a frame costs DIFS, a random backoff of 0..CW slots
// (CW doubling from CWmin after each failed attempt, up to CWmax), the PHY
// preamble and header, the frame at the PHY rate, SIFS, and the ACK (its
// preamble and 14 bytes at the ACK rate). An attempt fails with the
// profile's loss model (the frame error rate, per attempt); a failed
// attempt costs the same airtime (the sender waits an ACK timeout of about
// SIFS + ACK instead). After RetryLimit attempts the frame is dropped:
// the residual loss IP sees. Frame errors thus become delay and jitter,
// and only their tail becomes loss.
type wifiModel struct {
	phyKbit, ackKbit   float64
	slot, sifs, pream  int64 // ns
	cwMin, cwMax       int
	retryLimit         int // attempts at most (dot11ShortRetryLimit)
	macBytes, ackBytes int
	rng                *rand.Rand
}

func newWifiModel(p Profile, seed, stream uint64) *wifiModel {
	if p.WifiPhyKbit <= 0 {
		return nil
	}
	return &wifiModel{
		phyKbit: p.WifiPhyKbit, ackKbit: wifiAckKbitOf(p),
		slot: usToNs(p.WifiSlotUs), sifs: usToNs(p.WifiSifsUs), pream: usToNs(p.WifiPreambleUs),
		cwMin: int(p.WifiCWMin), cwMax: int(wifiCWMaxOf(p)), retryLimit: int(p.WifiRetryLimit),
		macBytes: wifiMACBytesOf(p), ackBytes: wifiACKBytes,
		rng: rand.New(rand.NewPCG(seed, stream)),
	}
}

func usToNs(us float64) int64 { return int64(math.Round(us * 1000)) }

// difs is SIFS + 2 slots (DCF).
func (w *wifiModel) difs() int64 { return w.sifs + 2*w.slot }

// cw is the contention window of attempt k (1-based).
func (w *wifiModel) cw(k int) int {
	cw := w.cwMin
	for i := 1; i < k && cw < w.cwMax; i++ {
		cw = min(2*cw+1, w.cwMax)
	}
	return cw
}

// fixedAirtime is an attempt's airtime without the backoff, for an IP
// packet of ipLen bytes.
func (w *wifiModel) fixedAirtime(ipLen int) int64 {
	data := float64((ipLen+w.macBytes)*8) / w.phyKbit * 1e6 // ns
	ack := float64(w.ackBytes*8) / w.ackKbit * 1e6
	return w.difs() + w.pream + int64(data) + w.sifs + w.pream + int64(ack)
}

// serve sends one frame: it returns the airtime used by all attempts, how
// many attempts were made, and whether the last one got through.
func (w *wifiModel) serve(ipLen int, loss lossModel) (airtime int64, attempts int, ok bool) {
	fixed := w.fixedAirtime(ipLen)
	for k := 1; k <= w.retryLimit; k++ {
		airtime += fixed + int64(w.rng.IntN(w.cw(k)+1))*w.slot
		if !loss.lose() {
			return airtime, k, true
		}
	}
	return airtime, w.retryLimit, false
}

// expectedAirtime is the mean airtime of a frame of ipLen bytes when each
// attempt fails independently with probability p, with its mean number of
// attempts and the residual loss p^RetryLimit.
func (w *wifiModel) expectedAirtime(ipLen int, p float64) (airtime, attempts, residual float64) {
	fixed := float64(w.fixedAirtime(ipLen))
	reach := 1.0 // probability that attempt k happens
	for k := 1; k <= w.retryLimit; k++ {
		attempts += reach
		airtime += reach * (fixed + float64(w.cw(k))/2*float64(w.slot))
		reach *= p
	}
	return airtime, attempts, reach
}

// simulatedAirtime is expectedAirtime for any loss model (Gilbert-Elliott,
// correlated): the mean over n frames run through the model itself.
func (w *wifiModel) simulatedAirtime(ipLen int, loss lossModel, n int) (airtime, attempts, residual float64) {
	var a, k, lost float64
	for range n {
		t, tries, ok := w.serve(ipLen, loss)
		a += float64(t)
		k += float64(tries)
		if !ok {
			lost++
		}
	}
	return a / float64(n), k / float64(n), lost / float64(n)
}
