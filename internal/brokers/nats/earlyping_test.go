package nats

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
)

// earlyPingServer speaks just enough of the NATS protocol for a client's
// connect: INFO, then, once the client's CONNECT and PING are in, a PING
// of its own before the PONG on the first pingFirst connections (what a
// nats-server with its short first PING sends a client whose handshake
// the lossy link slowed past 2 s), the PONG alone after that. It counts
// the connections it accepted and holds them until closed.
type earlyPingServer struct {
	ln        net.Listener
	pingFirst int64
	accepted  atomic.Int64

	mu   sync.Mutex
	held []net.Conn
	wg   sync.WaitGroup
}

func newEarlyPingServer(t *testing.T, pingFirst int64) *earlyPingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &earlyPingServer{ln: ln, pingFirst: pingFirst}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.close)
	return s
}

func (s *earlyPingServer) url() string { return "nats://" + s.ln.Addr().String() }

func (s *earlyPingServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		n := s.accepted.Add(1)
		s.mu.Lock()
		s.held = append(s.held, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handshake(c, n <= s.pingFirst)
		}()
	}
}

func (s *earlyPingServer) handshake(c net.Conn, pingFirst bool) {
	if _, err := c.Write([]byte(`INFO {"server_id":"early-ping","version":"2.15.2","proto":1,"max_payload":1048576,"headers":true}` + "\r\n")); err != nil {
		return
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if strings.HasPrefix(line, "PING") {
			break
		}
	}
	reply := "PONG\r\n"
	if pingFirst {
		reply = "PING\r\n" + reply
	}
	if _, err := c.Write([]byte(reply)); err != nil {
		return
	}
	_, _ = r.WriteTo(io.Discard) // the client's later PINGs and the like, until it goes
}

func (s *earlyPingServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.held {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// TestNATSConnectRetriesAnEarlyServerPing: a server PING that comes before
// the PONG of the client's connect fails nats.go's set-up ("expected
// 'PONG', got 'PING'"; a broker container's nats-server does this to a
// handshake the lossy link slowed past 2 s). natsConnect tries once more,
// and the second connection is the one it returns.
func TestNATSConnectRetriesAnEarlyServerPing(t *testing.T) {
	s := newEarlyPingServer(t, 1)
	nc, err := natsConnect(context.Background(), driver.Endpoint{URL: s.url()}, "t", nil)
	require.NoError(t, err)
	defer nc.Close()
	assert.True(t, nc.IsConnected())
	assert.EqualValues(t, 2, s.accepted.Load(), "the refused connection, then the one kept")
}

// TestNATSConnectGivesUpAfterItsAttempts: a server that always PINGs first
// is tried connectAttempts times, and its error is returned as nats.go
// gave it.
func TestNATSConnectGivesUpAfterItsAttempts(t *testing.T) {
	s := newEarlyPingServer(t, 1<<30)
	_, err := natsConnect(context.Background(), driver.Endpoint{URL: s.url()}, "t", nil)
	require.Error(t, err)
	assert.True(t, earlyPing(err), "%v", err)
	assert.EqualValues(t, connectAttempts, s.accepted.Load())
}

// TestRetryableSetUp: which set-up failures get another try.
func TestRetryableSetUp(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	assert.True(t, retryableSetUp(timeout))
	assert.True(t, retryableSetUp(errors.New("nats: expected 'PONG', got 'PING'")))
	assert.False(t, retryableSetUp(errors.New("nats: Authorization Violation")))
	assert.False(t, retryableSetUp(errors.New("dial tcp 10.77.2.2:4222: connect: connection refused")))
}
