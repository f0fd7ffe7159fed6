package driver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestOutageCauseLeavesOutTheAddresses: a socket error names both ends of
// its connection; the cause keeps the operation and the reason only, so
// that the outages of a case's connections count together.
func TestOutageCauseLeavesOutTheAddresses(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(10, 77, 1, 2), Port: 41234}
	timeout := &net.OpError{Op: "write", Net: "tcp", Source: addr, Addr: addr, Err: os.ErrDeadlineExceeded}
	reset := &net.OpError{Op: "read", Net: "tcp", Source: addr, Addr: addr, Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	assert.Equal(t, "write: i/o timeout", outageCause(timeout))
	assert.Equal(t, "read: connection reset by peer", outageCause(reset))
	assert.Equal(t, "read: connection reset by peer", outageCause(fmt.Errorf("STOMP connection to x: %w", reset)))
	assert.Equal(t, "EOF", outageCause(io.EOF))
	assert.Equal(t, "broker sent ERROR: AMQ229014: Did not receive data from <addr> within the 20000ms connection TTL. The connection will now be closed.",
		outageCause(errors.New("broker sent ERROR: AMQ229014: Did not receive data from 10.77.1.2:33482 within the 20000ms connection TTL. The connection will now be closed.")))
	assert.Empty(t, outageCause(nil))
}
