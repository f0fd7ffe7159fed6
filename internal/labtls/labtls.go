// Package labtls makes the TLS material of one lab: a CA of its own and a
// server certificate signed by it (ECDSA P-256) for the broker's lab
// address, written into a directory of pslab's cache that only the lab
// uses (keys 0600), and the client configuration that trusts that CA
// alone. Nothing of it is ever committed: the directory goes when the
// lab's session ends, and `pslab clean` removes those of dead runs.
package labtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pslab/internal/procs"
)

// Material is one lab's TLS files and the client configuration that
// verifies its server certificate.
type Material struct {
	Dir      string // holds everything below; Remove deletes it
	CAFile   string // the CA's certificate (PEM)
	CertFile string // the server's certificate (PEM)
	KeyFile  string // the server's private key (PEM, PKCS#8, 0600)
	// Hosts are the server certificate's subject alternative names.
	Hosts []string

	Cert tls.Certificate // the server's, for an in-process server
	pool *x509.CertPool
}

// subdir is where the labs' directories live in pslab's cache.
const subdir = "tls"

// New makes a directory for lab labName in cacheDir and writes there a
// fresh CA and a server certificate for hosts (IP addresses and DNS
// names), valid for a day.
func New(cacheDir, labName string, hosts []string) (*Material, error) {
	base := filepath.Join(cacheDir, subdir)
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, labName+"."+strconv.Itoa(os.Getpid())+".")
	if err != nil {
		return nil, err
	}
	m, err := write(dir, hosts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return m, nil
}

// Remove deletes the material's directory.
func (m *Material) Remove() error { return os.RemoveAll(m.Dir) }

// ClientConfig trusts the lab's CA alone (no system roots, no skipped
// verification); TLS 1.2 at least.
func (m *Material) ClientConfig() *tls.Config {
	return &tls.Config{RootCAs: m.pool, MinVersion: tls.VersionTLS12}
}

// ServerConfig serves the lab's server certificate (an in-process server).
func (m *Material) ServerConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{m.Cert}, MinVersion: tls.VersionTLS12}
}

func write(dir string, hosts []string) (*Material, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "pslab lab CA " + filepath.Base(dir)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	srv := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "pslab broker"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			srv.IPAddresses = append(srv.IPAddresses, ip)
		} else {
			srv.DNSNames = append(srv.DNSNames, h)
		}
	}
	if len(srv.IPAddresses)+len(srv.DNSNames) == 0 {
		return nil, errors.New("labtls: a server certificate needs at least one host")
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	caKeyDER, err := x509.MarshalPKCS8PrivateKey(caKey)
	if err != nil {
		return nil, err
	}
	m := &Material{Dir: dir, CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "server.pem"),
		KeyFile: filepath.Join(dir, "server-key.pem"), Hosts: hosts, pool: x509.NewCertPool()}
	m.pool.AddCert(caCert)
	for _, f := range []struct {
		path, typ string
		der       []byte
		mode      os.FileMode
	}{
		{m.CAFile, "CERTIFICATE", caDER, 0o644},
		{filepath.Join(dir, "ca-key.pem"), "PRIVATE KEY", caKeyDER, 0o600},
		{m.CertFile, "CERTIFICATE", srvDER, 0o644},
		{m.KeyFile, "PRIVATE KEY", keyDER, 0o600},
	} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), f.mode); err != nil {
			return nil, err
		}
	}
	m.Cert = tls.Certificate{Certificate: [][]byte{srvDER, caDER}, PrivateKey: key}
	return m, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// Leftovers removes the directories of labs whose pslab process has
// ended (a run that was killed), one line per directory removed.
func Leftovers(cacheDir string) ([]string, error) {
	dirs, _ := filepath.Glob(filepath.Join(cacheDir, subdir, "*.*.*"))
	var removed []string
	var errs []error
	for _, d := range dirs {
		parts := strings.Split(filepath.Base(d), ".")
		pid, err := strconv.Atoi(parts[len(parts)-2])
		if err != nil || procs.Running(pid) {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, fmt.Sprintf("TLS certificates of lab %s (its pslab, pid %d, has ended)", strings.Join(parts[:len(parts)-2], "."), pid))
	}
	return removed, errors.Join(errs...)
}
