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
)

// Header bytes around a TCP segment's payload on the veths, for the
// expected-goodput arithmetic.
const (
	ethHeader   = 14 // veths carry no preamble or FCS
	ipv4Header  = 20
	tcpHeader   = 20
	tcpTSOption = 12 // timestamps option, padded (Linux uses it by default)
	// tcpiOptTimestamps is TCPI_OPT_TIMESTAMPS of <linux/tcp.h>.
	tcpiOptTimestamps = 1
)

// tcpResult is one bulk transfer's measurement over its window.
type tcpResult struct {
	Bytes        int64 // distinct payload bytes the link delivered (see measureWindow)
	InOrderBytes int64 // the receiver's in-order count over the same window
	Seconds      float64
	MSS          int
	Timestamps   bool
	Retrans      uint32 // over the whole transfer
}

// tcpPhase sends bulk TCP data in one direction between the namespaces for
// warm+d and measures the goodput over the last d (the warm-up lets slow
// start and its aftermath settle).
func (l *Lab) tcpPhase(ctx context.Context, dir Direction, warm, d time.Duration) (tcpResult, error) {
	ln, err := l.ListenBroker("tcp", net.JoinHostPort(l.BrokerIP(), "0"))
	if err != nil {
		return tcpResult{}, err
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	cli, err := l.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return tcpResult{}, fmt.Errorf("dial broker side: %w", err)
	}
	defer cli.Close()
	var srv net.Conn
	select {
	case srv = <-accepted:
	case <-time.After(10 * time.Second):
	}
	if srv == nil {
		return tcpResult{}, errors.New("broker side accepted no connection")
	}
	defer srv.Close()
	w, r := cli, srv
	if dir == ToClient {
		w, r = srv, cli
	}
	stop := context.AfterFunc(ctx, func() { cli.Close(); srv.Close() })
	defer stop()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // writer: as fast as TCP takes it, until the end
		defer wg.Done()
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}()
	go func() { // reader: drains the socket so the window never closes
		defer wg.Done()
		_, _ = io.Copy(io.Discard, r)
	}()
	res, err := l.measureWindow(ctx, dir, r, w, warm, d)
	if err == nil {
		res.MSS, res.Timestamps, res.Retrans, err = tcpInfo(w)
	}
	cli.Close()
	srv.Close()
	wg.Wait()
	if cerr := ctx.Err(); cerr != nil {
		return tcpResult{}, cerr
	}
	return res, err
}

// measureWindow measures a bulk transfer over d after warm.
//
// Goodput is counted where the link hands packets to the receiver: the
// router's transmit counters of the direction's egress veth give the frames
// the link delivered (random and tail drops happen before it); minus their
// headers they are the payload, and minus the segments the receiver reported
// as duplicates (the sender's DSACK count), the distinct payload. The
// counters are exact at the sampling instants.
//
// The receiver's own in-order count (TCP_INFO bytes_received) is kept as a
// cross-check but is not the measure: it stops at the first hole, so a
// window end that falls while a lost segment is being recovered misses up
// to a congestion window of data that has arrived behind the hole (over
// 100 KB here, a third of a 3 s window at 1 Mbit/s), which then lands in
// the next window.
func (l *Lab) measureWindow(ctx context.Context, dir Direction, r, w net.Conn, warm, d time.Duration) (tcpResult, error) {
	type sample struct {
		at      time.Time
		tx      DirCounters
		rcvd    uint64
		dupSegs uint32
	}
	take := func() (sample, error) {
		c, err := l.Counters()
		if err != nil {
			return sample{}, err
		}
		wi, err := getTCPInfo(w)
		if err != nil {
			return sample{}, err
		}
		ri, err := getTCPInfo(r)
		if err != nil {
			return sample{}, err
		}
		return sample{at: time.Now(), tx: c.Dir(dir), rcvd: ri.Bytes_received, dupSegs: wi.Dsack_dups}, nil
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
	wi, err := getTCPInfo(w)
	if err != nil {
		return tcpResult{}, err
	}
	hdr := int64(segmentOverhead(wi.Options&tcpiOptTimestamps != 0))
	frames := int64(s2.tx.TxPackets - s1.tx.TxPackets)
	payload := int64(s2.tx.TxBytes-s1.tx.TxBytes) - frames*hdr
	payload -= int64(s2.dupSegs-s1.dupSegs) * int64(wi.Snd_mss)
	if frames == 0 {
		return tcpResult{}, fmt.Errorf("bulk transfer: nothing delivered in %s", d)
	}
	return tcpResult{
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

// tcpInfo reads the sender's MSS, timestamp option and retransmissions.
func tcpInfo(c net.Conn) (mss int, ts bool, retrans uint32, err error) {
	info, err := getTCPInfo(c)
	if err != nil {
		return 0, false, 0, err
	}
	return int(info.Snd_mss), info.Options&tcpiOptTimestamps != 0, info.Total_retrans, nil
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
