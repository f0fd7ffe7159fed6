package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"
)

// AccessProbe tells over a fresh connection c to host (host:port) whether
// a broker lets a client in without credentials, and how it knows. Each
// broker's descriptor (internal/brokers) names its probe.
type AccessProbe func(c net.Conn, host string) (open bool, detail string, err error)

// OpenAccess says whether the broker at e's address lets a client in
// without credentials, by probe (e.g. NATSOpen, STOMPOpen). It dials over
// the host network and sends nothing but what probe sends.
func (e *External) OpenAccess(ctx context.Context, probe AccessProbe) (open bool, detail string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", e.host)
	if err != nil {
		return false, "", fmt.Errorf("%s at %s is unreachable: %w", e.name, e.host, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	return probe(c, e.host)
}

// URL is the external broker's URL without credentials.
func (e *External) URL() string { return e.ep.URL }

// NATSOpen reads the server's INFO line (auth_required) (an AccessProbe).
func NATSOpen(c net.Conn, _ string) (bool, string, error) {
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return false, "", fmt.Errorf("read NATS INFO: %w", err)
	}
	js, ok := strings.CutPrefix(strings.TrimSpace(line), "INFO ")
	if !ok {
		return false, "", fmt.Errorf("not a NATS server: first line %q", line)
	}
	var info struct {
		AuthRequired bool `json:"auth_required"`
		TLSRequired  bool `json:"tls_required"`
	}
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		return false, "", fmt.Errorf("NATS INFO: %w", err)
	}
	if info.AuthRequired {
		return false, "INFO says auth_required", nil
	}
	return true, "INFO says no authentication is required", nil
}

// STOMPOpen sends a CONNECT without login and reads the answer (an
// AccessProbe).
func STOMPOpen(c net.Conn, host string) (bool, string, error) {
	h, _, _ := net.SplitHostPort(host)
	if _, err := fmt.Fprintf(c, "CONNECT\naccept-version:1.2\nhost:%s\n\n\x00", h); err != nil {
		return false, "", err
	}
	cmd, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return false, "", fmt.Errorf("read STOMP answer: %w", err)
	}
	switch strings.TrimSpace(cmd) {
	case "CONNECTED":
		return true, "a CONNECT without login was answered CONNECTED", nil
	case "ERROR":
		return false, "a CONNECT without login was refused (ERROR)", nil
	}
	return false, "", fmt.Errorf("not a STOMP broker: answered %q", cmd)
}
