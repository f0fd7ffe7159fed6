package netem

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"time"
)

// What Verify expects of a profile's models, beyond rate and independent
// loss: round-trip time (delay, jitter, the time a ping spends being sent
// at the rate, over the 802.11 medium, or waiting for a trace's next
// delivery opportunity), goodput under a trace or the 802.11 model, loss
// with outages and retries, and the lengths of loss runs.

// pingIPLen is the IP packet of a ping (56 bytes of data, as ping sends).
const pingIPLen = ipv4Header + 8 + 56

// expectedOneWayMs is the model's mean one-way time of a lone packet of
// ipLen bytes on an idle link in direction d: the delay, plus its
// serialisation at the rate, its 802.11 airtime with retries, or its wait
// for the trace's next delivery opportunity.
func expectedOneWayMs(p Profile, d Direction, ipLen int) float64 {
	ms := p.DelayMs
	switch {
	case p.WifiPhyKbit > 0:
		air, _, _ := wifiExpectation(p, newWifiModel(p, profileSeed(p), 5), ipLen)
		ms += air / 1e6
	case p.TraceUp != "":
		if t, err := loadTrace(p, d); err == nil {
			ms += t.meanWaitMs()
		}
	case p.RateKbit > 0:
		ms += float64((ipLen+ethHeader)*8) / NominalRateKbit(p, d)
	}
	return ms
}

// meanWaitMs is how long a packet arriving at a random time waits for the
// trace's next opportunity: the sum of the squared gaps over twice the
// period.
func (t *Trace) meanWaitMs() float64 {
	var s float64
	prev := t.Ms[len(t.Ms)-1] - t.PeriodMs() // the last one of the previous period
	for _, m := range t.Ms {
		g := float64(m - prev)
		s += g * g
		prev = m
	}
	return s / 2 / float64(t.PeriodMs())
}

// ExpectedRTTMs is the model's mean round trip of a ping on an idle link.
func ExpectedRTTMs(p Profile) float64 {
	return expectedOneWayMs(p, ToBroker, pingIPLen) + expectedOneWayMs(p, ToClient, pingIPLen)
}

// jitterStdMs is the standard deviation of one direction's delay draw.
func jitterStdMs(p Profile) float64 {
	if p.JitterDist == JitterNormal {
		return p.JitterMs
	}
	return p.JitterMs / math.Sqrt(3)
}

// ExpectedLossPct is the share of packets the link loses, as the probes
// see it: the loss model's mean (under 802.11 only what is still lost
// after the last retry), and packets arriving during an outage.
func ExpectedLossPct(p Profile) float64 {
	q := MeanLossPct(p) / 100
	if p.WifiPhyKbit > 0 {
		_, _, q = wifiExpectation(p, newWifiModel(p, profileSeed(p), 5), probeIPLen)
	}
	off := p.OffFraction()
	return 100 * (1 - (1-q)*(1-off))
}

// probeIPLen is a UDP probe's IP packet.
const probeIPLen = ipv4Header + 8 + probePayload

// expectedGoodputKbit is the model's bound for a bulk TCP transfer in
// direction d: for a trace, the opportunities the relay counted over the
// window (oppBytes in secs) carrying full packets; under 802.11, full
// frames and the receiver's ACKs (one per two segments) taking turns on
// the one medium; at a fixed rate, the rate less headers (and in half
// duplex the ACKs). Outages take their share of the time.
func expectedGoodputKbit(p Profile, d Direction, mss int, ts bool, oppBytes uint64, secs float64) (kbit float64, frame int, ackPerSeg float64) {
	ipPkt := mss + segmentOverhead(ts) - ethHeader
	switch {
	case p.WifiPhyKbit > 0:
		w := newWifiModel(p, profileSeed(p), 5)
		data, _, _ := wifiExpectation(p, w, ipPkt)
		ack, _, _ := wifiExpectation(p, w, segmentOverhead(ts)-ethHeader)
		frame, ackPerSeg = ipPkt+ethHeader, float64(segmentOverhead(ts))/2
		kbit = float64(mss*8) / (data + ack/2) * 1e6
	case p.TraceUp != "":
		frame = ipPkt + ethHeader
		if secs > 0 {
			kbit = float64(oppBytes) * 8 / secs / 1000 * float64(mss) / float64(ipPkt)
		}
		return kbit, frame, 0
	default:
		kbit, frame, ackPerSeg = expectedGoodput(NominalRateKbit(p, d), mss, ts, p.Duplex == DuplexHalf && p.RateKbit > 0)
	}
	return kbit * (1 - p.OffFraction()), frame, ackPerSeg
}

// pingPhase sends ICMP echo requests from the clients' namespace to the
// broker side's address, 10 a second for d, and times the replies. The
// requests are far apart, so each crosses an idle link.
func (l *Lab) pingPhase(ctx context.Context, p Profile, d time.Duration) (RTTResult, error) {
	r := RTTResult{ExpectedMs: ExpectedRTTMs(p), ExpectedStdMs: math.Sqrt2 * jitterStdMs(p)}
	pc, err := l.ListenPacketIn(SideClient, "ip4:icmp", l.ClientIP())
	if err != nil {
		return r, fmt.Errorf("ping: %w", err)
	}
	defer pc.Close()
	dst := &net.IPAddr{IP: net.ParseIP(l.BrokerIP())}
	id := uint16(os.Getpid())
	var mu sync.Mutex
	sent := map[uint16]time.Time{}
	var rtts []time.Duration
	wait := time.Duration((2*(p.DelayMs+3*p.JitterMs)+ExpectedRTTMs(p))*float64(time.Millisecond)) + time.Second
	end := time.Now().Add(d)
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 1500)
		_ = pc.SetReadDeadline(end.Add(wait))
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					err = nil
				}
				done <- err
				return
			}
			if n < 8 || buf[0] != 0 || binary.BigEndian.Uint16(buf[4:]) != id {
				continue
			}
			seq := binary.BigEndian.Uint16(buf[6:])
			mu.Lock()
			if t0, ok := sent[seq]; ok {
				rtts = append(rtts, time.Since(t0))
				delete(sent, seq)
			}
			mu.Unlock()
		}
	}()
	msg := make([]byte, 8+56)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for seq := uint16(1); time.Now().Before(end); seq++ {
		msg[0], msg[1] = 8, 0 // echo request
		binary.BigEndian.PutUint16(msg[2:], 0)
		binary.BigEndian.PutUint16(msg[4:], id)
		binary.BigEndian.PutUint16(msg[6:], seq)
		binary.BigEndian.PutUint16(msg[2:], icmpChecksum(msg))
		mu.Lock()
		sent[seq] = time.Now()
		mu.Unlock()
		if _, err := pc.WriteTo(msg, dst); err == nil {
			r.Sent++
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-tick.C:
		}
	}
	if err := <-done; err != nil {
		return r, fmt.Errorf("ping: %w", err)
	}
	r.Received = len(rtts)
	if len(rtts) > 0 {
		var sum, sq float64
		for _, x := range rtts {
			ms := float64(x) / 1e6
			sum += ms
			sq += ms * ms
		}
		n := float64(len(rtts))
		r.MeanMs = sum / n
		r.StdMs = math.Sqrt(math.Max(sq/n-r.MeanMs*r.MeanMs, 0))
		r.P50Ms, r.P90Ms = quantileMs(rtts, 0.5), quantileMs(rtts, 0.9)
	}
	return r, nil
}

func icmpChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// probeRuns returns the lengths of the runs of lost probes (sequence
// numbers 0..sent-1 not received).
func probeRuns(seen map[uint64]bool, sent int) []int {
	lost := make([]bool, sent)
	for i := range lost {
		lost[i] = !seen[uint64(i)]
	}
	return lossRuns(lost)
}
