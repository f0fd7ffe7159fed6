package netem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"pslab/netem/linkinfo"
)

// Header bytes around a TCP segment's payload on the veths, for the
// expected-goodput arithmetic.
const (
	ethHeader   = linkinfo.EthHeader // veths carry no preamble or FCS
	ipv4Header  = linkinfo.IPv4Header
	tcpHeader   = linkinfo.TCPHeader
	tcpTSOption = 12 // timestamps option, padded (Linux uses it by default)
	// tcpiOptTimestamps is TCPI_OPT_TIMESTAMPS of <linux/tcp.h>.
	tcpiOptTimestamps = 1
)

// bulkFlows is how many TCP connections carry a direction's bulk transfer.
// One connection on a lossy 1 Mbit/s link now and then idles the link for a
// second or more (a retransmission timed out, or slow start overshot the
// queue); with several, the others keep it busy, as the many connections of
// a pub/sub run do. The goodput is their sum.
const bulkFlows = 4

// tcpResult is one bulk transfer's measurement over its window.
type tcpResult struct {
	Bytes        int64 // distinct payload bytes the link delivered (see measureWindow)
	InOrderBytes int64 // the receivers' in-order count over the same window
	Seconds      float64
	MSS          int
	Timestamps   bool
	Retrans      uint32 // over the whole transfer, all flows
	OppBytes     uint64 // a trace's delivery opportunities over the window (relay)
}

// flow is one bulk connection: w writes, r reads.
type flow struct{ w, r net.Conn }

// tcpPhase sends bulk TCP data over bulkFlows connections in one direction
// between the namespaces for warm+d and measures the goodput over the last
// d (the warm-up lets slow start and its aftermath settle).
func (l *Lab) tcpPhase(ctx context.Context, dir Direction, warm, d time.Duration) (tcpResult, error) {
	flows, err := l.openFlows(ctx, dir, bulkFlows)
	closeAll := func() {
		for _, f := range flows {
			f.w.Close()
			f.r.Close()
		}
	}
	defer closeAll()
	if err != nil {
		return tcpResult{}, err
	}
	stop := context.AfterFunc(ctx, closeAll)
	defer stop()

	var wg sync.WaitGroup
	for _, f := range flows {
		wg.Add(2)
		go func() { // writer: as fast as TCP takes it, until closed
			defer wg.Done()
			buf := make([]byte, 64<<10)
			for {
				if _, err := f.w.Write(buf); err != nil {
					return
				}
			}
		}()
		go func() { // reader: drains the socket so the window never closes
			defer wg.Done()
			_, _ = io.Copy(io.Discard, f.r)
		}()
	}
	res, err := l.measureWindow(ctx, dir, flows, warm, d)
	if err == nil {
		res.MSS, res.Timestamps, res.Retrans, err = tcpInfo(flows)
	}
	closeAll()
	wg.Wait()
	if cerr := ctx.Err(); cerr != nil {
		return tcpResult{}, cerr
	}
	return res, err
}

// openFlows connects n client sockets to a listener in the broker namespace.
func (l *Lab) openFlows(ctx context.Context, dir Direction, n int) ([]flow, error) {
	ln, err := l.ListenBroker("tcp", net.JoinHostPort(l.BrokerIP(), "0"))
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	var flows []flow
	for range n {
		cli, srv, err := l.connectFlow(ctx, ln.(*net.TCPListener))
		if err != nil {
			return flows, err
		}
		f := flow{w: cli, r: srv}
		if dir == ToClient {
			f = flow{w: srv, r: cli}
		}
		flows = append(flows, f)
	}
	return flows, nil
}

// flowAttempts is how many times a flow's connection is dialled before
// verification gives up: on a bursty-loss link the handshake's last ACK
// and the SYN-ACKs resent for it (1, 3 and 7 s later) can all fall into
// one loss burst, since a Gilbert chain only steps on a packet and a
// sparse handshake finds it still bad.
const flowAttempts = 3

// connectFlow dials the broker-side listener ln from the client
// namespace and accepts that connection: its client and broker ends. A
// dial whose connection the broker side does not accept within 10 s is
// abandoned and dialled again; a late connection of an abandoned dial is
// told apart by its address and closed.
func (l *Lab) connectFlow(ctx context.Context, ln *net.TCPListener) (cli, srv net.Conn, err error) {
	for attempt := 1; ; attempt++ {
		cli, err = l.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			return nil, nil, fmt.Errorf("dial broker side: %w", err)
		}
		srv, err = acceptFrom(ln, cli.LocalAddr().String(), time.Now().Add(10*time.Second))
		if err == nil {
			return cli, srv, nil
		}
		cli.Close()
		if attempt == flowAttempts || ctx.Err() != nil {
			return nil, nil, fmt.Errorf("broker side accepted no connection (%d dials): %w", attempt, err)
		}
	}
}

// acceptFrom accepts on ln until the connection from address from
// arrives, closing any other (an abandoned dial's), or until deadline.
func acceptFrom(ln *net.TCPListener, from string, deadline time.Time) (net.Conn, error) {
	_ = ln.SetDeadline(deadline)
	for {
		c, err := ln.Accept()
		if err != nil {
			return nil, err
		}
		if c.RemoteAddr().String() == from {
			return c, nil
		}
		c.Close()
	}
}

// measureWindow measures a bulk transfer over d after warm.
//
// Goodput is counted where the link hands packets to the receiver: the
// router's transmit counters of the direction's egress veth give the frames
// the link delivered (random and tail drops happen before it); minus their
// headers they are the payload, and minus the segments the receivers
// reported as duplicates (the senders' DSACK counts), the distinct payload.
// The counters are exact at the sampling instants.
//
// The receivers' own in-order count (TCP_INFO bytes_received) is kept as a
// cross-check but is not the measure: it stops at the first hole, so a
// window end that falls while a lost segment is being recovered misses up
// to a congestion window of data that has arrived behind the hole (over
// 100 KB here, a third of a 3 s window at 1 Mbit/s), which then lands in
// the next window.
func (l *Lab) measureWindow(ctx context.Context, dir Direction, flows []flow, warm, d time.Duration) (tcpResult, error) {
	type sample struct {
		at      time.Time
		tx      DirCounters
		rcvd    uint64
		dupSegs uint64
	}
	take := func() (sample, error) {
		c, err := l.Counters()
		if err != nil {
			return sample{}, err
		}
		s := sample{at: time.Now(), tx: c.Dir(dir)}
		for _, f := range flows {
			wi, err := getTCPInfo(f.w)
			if err != nil {
				return sample{}, err
			}
			ri, err := getTCPInfo(f.r)
			if err != nil {
				return sample{}, err
			}
			s.rcvd += ri.Bytes_received
			s.dupSegs += uint64(wi.Dsack_dups)
		}
		return s, nil
	}
	sleep := func(t time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(t):
			return nil
		}
	}
	if err := sleep(warm); err != nil {
		return tcpResult{}, err
	}
	s1, err := take()
	if err != nil {
		return tcpResult{}, err
	}
	if err := sleep(d); err != nil {
		return tcpResult{}, err
	}
	s2, err := take()
	if err != nil {
		return tcpResult{}, err
	}
	mss, ts, _, err := tcpInfo(flows)
	if err != nil {
		return tcpResult{}, err
	}
	frames := int64(s2.tx.TxPackets - s1.tx.TxPackets)
	if frames == 0 {
		return tcpResult{}, fmt.Errorf("bulk transfer: nothing delivered in %s", d)
	}
	payload := int64(s2.tx.TxBytes-s1.tx.TxBytes) - frames*int64(segmentOverhead(ts))
	payload -= int64(s2.dupSegs-s1.dupSegs) * int64(mss)
	var opp uint64
	if s1.tx.Relay != nil && s2.tx.Relay != nil {
		opp = s2.tx.Relay.OpportunityBytes - s1.tx.Relay.OpportunityBytes
	}
	return tcpResult{
		OppBytes:     opp,
		Bytes:        max(payload, 0),
		InOrderBytes: int64(s2.rcvd - s1.rcvd),
		Seconds:      s2.at.Sub(s1.at).Seconds(),
	}, nil
}

// segmentOverhead is the header bytes of a TCP segment on the veth.
func segmentOverhead(timestamps bool) int {
	if timestamps {
		return ethHeader + ipv4Header + tcpHeader + tcpTSOption
	}
	return ethHeader + ipv4Header + tcpHeader
}

// tcpInfo reads the senders' MSS and timestamp option (of the first flow)
// and their retransmissions (all flows).
func tcpInfo(flows []flow) (mss int, ts bool, retrans uint32, err error) {
	for i, f := range flows {
		info, err := getTCPInfo(f.w)
		if err != nil {
			return 0, false, 0, err
		}
		if i == 0 {
			mss, ts = int(info.Snd_mss), info.Options&tcpiOptTimestamps != 0
		}
		retrans += info.Total_retrans
	}
	return mss, ts, retrans, nil
}

func getTCPInfo(c net.Conn) (*unix.TCPInfo, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil, errors.New("not a TCP connection")
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var info *unix.TCPInfo
	var ierr error
	if err := raw.Control(func(fd uintptr) {
		info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil {
		return nil, err
	}
	if ierr != nil {
		return nil, fmt.Errorf("TCP_INFO: %w", ierr)
	}
	return info, nil
}

// expectedGoodput is the TCP payload rate a link of rateKbit carries with
// full segments of mss bytes: every segment costs its headers on the wire
// (Ethernet 14 + IP 20 + TCP 20 + options) and, in half duplex, also the
// ACKs coming back through the same budget (Linux ACKs every second full
// segment, each ACK a header-only frame). Loss costs no budget here: the
// router drops before its queue, so the survivors fill the link.
func expectedGoodput(rateKbit float64, mss int, ts, half bool) (kbit float64, frame int, ackPerSeg float64) {
	frame = mss + segmentOverhead(ts)
	if half {
		ackPerSeg = float64(segmentOverhead(ts)) / 2
	}
	return rateKbit * float64(mss) / (float64(frame) + ackPerSeg), frame, ackPerSeg
}
