package driver_test

import (
	"context"
	"crypto/tls"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/labtls"
)

// TestTLSClientCountsReconnects: a client's first handshake is a
// connection, every later one a reconnection; a handshake against a
// certificate of another CA fails and is counted as failed.
func TestTLSClientCountsReconnects(t *testing.T) {
	m, err := labtls.New(t.TempDir(), "t", []string{"127.0.0.1"})
	require.NoError(t, err)
	other, err := labtls.New(t.TempDir(), "o", []string{"127.0.0.1"})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				tc := tlsServer(c, m)
				_ = tc.Handshake()
				tc.Close()
			}()
		}
	}()
	log := &driver.HandshakeLog{}
	tc := driver.NewTLSClient(m.ClientConfig(), log)
	for range 3 {
		c, err := tc.Dialer(nil).DialContext(context.Background(), "tcp", ln.Addr().String())
		require.NoError(t, err)
		conn, err := tc.Handshake(context.Background(), c, "127.0.0.1")
		require.NoError(t, err)
		conn.Close()
	}
	bad := driver.NewTLSClient(other.ClientConfig(), log)
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	_, err = bad.Handshake(context.Background(), c, "127.0.0.1")
	require.Error(t, err)
	hs, failed := log.Handshakes()
	require.Len(t, hs, 3)
	assert.False(t, hs[0].Reconnect)
	assert.True(t, hs[1].Reconnect)
	assert.True(t, hs[2].Reconnect)
	assert.Equal(t, 1, failed)
	assert.Equal(t, "TLS 1.3", hs[0].Version)
}

func tlsServer(c net.Conn, m *labtls.Material) *tls.Conn { return tls.Server(c, m.ServerConfig()) }
