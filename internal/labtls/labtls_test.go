package labtls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaterial: keys are 0600, the server certificate names the lab's
// hosts and verifies against the lab's CA, a real handshake with the
// client configuration succeeds, and Remove leaves nothing.
func TestMaterial(t *testing.T) {
	m, err := New(t.TempDir(), "lab1", []string{"10.77.1.2", "127.0.0.1", "localhost"})
	require.NoError(t, err)
	for _, f := range []string{m.KeyFile, filepath.Join(m.Dir, "ca-key.pem")} {
		st, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
	}
	raw, err := os.ReadFile(m.CertFile)
	require.NoError(t, err)
	b, _ := pem.Decode(raw)
	cert, err := x509.ParseCertificate(b.Bytes)
	require.NoError(t, err)
	assert.Len(t, cert.IPAddresses, 2)
	assert.Equal(t, []string{"localhost"}, cert.DNSNames)
	for _, h := range []string{"10.77.1.2", "127.0.0.1", "localhost"} {
		_, err := cert.Verify(x509.VerifyOptions{Roots: m.ClientConfig().RootCAs, DNSName: h})
		assert.NoError(t, err, h)
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: m.ClientConfig().RootCAs, DNSName: "10.77.9.9"})
	assert.Error(t, err, "an address the certificate does not name")

	ln, err := tls.Listen("tcp", "127.0.0.1:0", m.ServerConfig())
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	cfg := m.ClientConfig()
	cfg.ServerName = "127.0.0.1"
	c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
	require.NoError(t, err)
	c.Close()

	require.NoError(t, m.Remove())
	_, err = os.Stat(m.Dir)
	assert.True(t, os.IsNotExist(err))
}

// TestLeftovers removes the directories of ended pslab processes only.
func TestLeftovers(t *testing.T) {
	cache := t.TempDir()
	live, err := New(cache, "lab1", []string{"127.0.0.1"})
	require.NoError(t, err)
	dead := filepath.Join(cache, subdir, "lab2.999999999.x")
	require.NoError(t, os.MkdirAll(dead, 0o700))
	removed, err := Leftovers(cache)
	require.NoError(t, err)
	assert.Len(t, removed, 1)
	assert.DirExists(t, live.Dir)
	assert.NoDirExists(t, dead)
}
