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

// tcpResult is one bulk transfer's measurement.
type tcpResult struct {
	Bytes      int64
	Seconds    float64
	MSS        int
	Timestamps bool
	Retrans    uint32
}

// tcpPhase sends bulk TCP data in one direction between the namespaces for
// warm+d and measures the receiver's goodput over the last d (the warm-up
// lets slow start finish).
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
	res, err := measureReceived(ctx, r, warm, d)
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

// measureReceived samples the receiving socket's TCP_INFO bytes_received
// (payload delivered in order by TCP, retransmitted duplicates not counted)
// after the warm-up and again d later. Reading the kernel's count, not the
// application's reads, keeps scheduling delays of the reader out of it.
func measureReceived(ctx context.Context, r net.Conn, warm, d time.Duration) (tcpResult, error) {
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
	b1, err := bytesReceived(r)
	t1 := time.Now()
	if err != nil {
		return tcpResult{}, err
	}
	if err := sleep(d); err != nil {
		return tcpResult{}, err
	}
	b2, err := bytesReceived(r)
	t2 := time.Now()
	if err != nil {
		return tcpResult{}, err
	}
	if b2 == b1 {
		return tcpResult{}, fmt.Errorf("bulk transfer: nothing received in %s", d)
	}
	return tcpResult{Bytes: int64(b2 - b1), Seconds: t2.Sub(t1).Seconds()}, nil
}

func bytesReceived(c net.Conn) (uint64, error) {
	info, err := getTCPInfo(c)
	if err != nil {
		return 0, err
	}
	return info.Bytes_received, nil
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
	opts := 0
	if ts {
		opts = tcpTSOption
	}
	frame = mss + ethHeader + ipv4Header + tcpHeader + opts
	if half {
		ackPerSeg = float64(ethHeader+ipv4Header+tcpHeader+opts) / 2
	}
	return rateKbit * float64(mss) / (float64(frame) + ackPerSeg), frame, ackPerSeg
}
