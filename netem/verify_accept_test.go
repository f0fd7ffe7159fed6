package netem

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A verification flow pairs a dial with its own accepted connection: a
// late connection of an abandoned dial, queued first, is closed, not
// paired with the next dial.
func TestAcceptFromPairsTheDialItWaitsFor(t *testing.T) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer ln.Close()
	late, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer late.Close()
	want, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer want.Close()

	srv, err := acceptFrom(ln, want.LocalAddr().String(), time.Now().Add(time.Minute))
	require.NoError(t, err)
	defer srv.Close()
	assert.Equal(t, want.LocalAddr().String(), srv.RemoteAddr().String())

	// The abandoned dial's connection was closed by the broker side.
	require.NoError(t, late.SetReadDeadline(time.Now().Add(time.Minute)))
	_, err = late.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the late connection is closed")

	// Nothing from the awaited address: the deadline ends the wait.
	_, err = acceptFrom(ln, "127.0.0.1:1", time.Now().Add(50*time.Millisecond))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())
}
