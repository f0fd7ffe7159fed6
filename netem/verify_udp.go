package netem

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"net"
	"os"
	"slices"
	"sync"
	"time"
)

// A probe packet is 16 bytes of UDP payload: a sequence number and the send
// time (nanoseconds since the probe started; sender and receiver share this
// process's monotonic clock, so one-way delay needs no clock sync).
const (
	probePayload = 16
	probeFrame   = ethHeader + ipv4Header + 8 + probePayload // 58 bytes on the veth
	// probeShare of a direction's rate budget is used by the probes; in half
	// duplex both directions probe at once, 2 x 15 % of the shared budget.
	// Low enough that the router queue never overflows (queue drops would
	// count as loss), high enough for ~320 packets/s at 1 Mbit/s, which
	// measures 3 % loss to about +/- 0.4 points (one sigma) in 10 s.
	probeShare       = 0.15
	unshapedProbePPS = 2000
)

// probeResult is one direction's UDP probe count.
type probeResult struct {
	Sent, Received, Duplicates int
	Delays                     []time.Duration // one-way, of received packets
	Seen                       map[uint64]bool // sequence numbers received
}

// probePPS is the probe packet rate for a profile.
func probePPS(p Profile) float64 {
	if p.WifiPhyKbit > 0 { // probeShare of the medium's time, per direction
		air := expectedWifiAirtime(p, newWifiModel(p, profileSeed(p), 5), probeIPLen)
		return math.Max(20, math.Min(probeShare*1e9/air, 5000))
	}
	rate := min(NominalRateKbit(p, ToBroker), NominalRateKbit(p, ToClient))
	if rate <= 0 {
		return unshapedProbePPS
	}
	pps := probeShare * rate * 1000 / (probeFrame * 8)
	return math.Max(20, math.Min(pps, 5000))
}

// udpPhase sends sequence-numbered UDP probes in both directions at once
// for d and counts what arrives.
func (l *Lab) udpPhase(ctx context.Context, p Profile, d time.Duration) (map[Direction]*probeResult, error) {
	rxBrk, err := l.ListenPacketIn(SideBroker, "udp", net.JoinHostPort(l.BrokerIP(), "0"))
	if err != nil {
		return nil, err
	}
	defer rxBrk.Close()
	rxCli, err := l.ListenPacketIn(SideClient, "udp", net.JoinHostPort(l.ClientIP(), "0"))
	if err != nil {
		return nil, err
	}
	defer rxCli.Close()
	txCli, err := l.DialIn(ctx, SideClient, "udp", rxBrk.LocalAddr().String())
	if err != nil {
		return nil, err
	}
	defer txCli.Close()
	txBrk, err := l.DialIn(ctx, SideBroker, "udp", rxCli.LocalAddr().String())
	if err != nil {
		return nil, err
	}
	defer txBrk.Close()

	base := time.Now()
	drain := time.Duration((p.DelayMs+p.JitterMs)*float64(time.Millisecond)) + 300*time.Millisecond
	if p.RateKbit > 0 || NominalRateKbit(p, ToBroker) > 0 {
		drain += time.Duration(p.EffectiveQueueMs() * float64(time.Millisecond))
	}
	end := base.Add(d)
	res := map[Direction]*probeResult{ToBroker: {}, ToClient: {}}
	pps := probePPS(p)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i, x := range []struct {
		tx net.Conn
		rx net.PacketConn
		r  *probeResult
	}{{txCli, rxBrk, res[ToBroker]}, {txBrk, rxCli, res[ToClient]}} {
		wg.Add(2)
		go func() { defer wg.Done(); errs[2*i] = receiveProbes(x.rx, base, end.Add(drain), x.r) }()
		go func() { defer wg.Done(); errs[2*i+1] = sendProbes(ctx, x.tx, base, end, pps, &x.r.Sent) }()
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

// sendProbes paces packets at pps from base until end, counting the ones
// the kernel accepted.
func sendProbes(ctx context.Context, c net.Conn, base, end time.Time, pps float64, sent *int) error {
	buf := make([]byte, probePayload)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	seq := uint64(0)
	for {
		now := time.Now()
		if now.After(end) {
			return nil
		}
		due := uint64(now.Sub(base).Seconds() * pps)
		for ; seq < due; seq++ {
			binary.BigEndian.PutUint64(buf, seq)
			binary.BigEndian.PutUint64(buf[8:], uint64(time.Since(base)))
			if _, err := c.Write(buf); err == nil {
				*sent++
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// receiveProbes counts distinct and duplicate sequence numbers until stop.
func receiveProbes(pc net.PacketConn, base, stop time.Time, r *probeResult) error {
	if err := pc.SetReadDeadline(stop); err != nil {
		return err
	}
	seen := map[uint64]bool{}
	r.Seen = seen
	buf := make([]byte, 2048)
	for {
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
			return err
		}
		if n != probePayload {
			continue
		}
		seq := binary.BigEndian.Uint64(buf)
		if seen[seq] {
			r.Duplicates++
			continue
		}
		seen[seq] = true
		r.Received++
		sentAt := time.Duration(binary.BigEndian.Uint64(buf[8:]))
		r.Delays = append(r.Delays, time.Since(base)-sentAt)
	}
}

// quantileMs returns the q-quantile of ds in milliseconds (0 if empty).
func quantileMs(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Round(q * float64(len(s)-1)))
	return float64(s[i]) / float64(time.Millisecond)
}
