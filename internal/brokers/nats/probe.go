package nats

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strings"
)

// login reads INFO, sends CONNECT with the credentials and a PING: a
// PONG means the server took them, -ERR that it refused them (a
// broker.Login).
func login(c net.Conn, _, user, pass string) error {
	r := bufio.NewReader(c)
	if _, err := r.ReadString('\n'); err != nil {
		return fmt.Errorf("read INFO: %w", err)
	}
	opts := map[string]any{"verbose": false, "pedantic": false, "name": "pslab-login-check"}
	if user != "" {
		opts["user"], opts["pass"] = user, pass
	}
	js, _ := json.Marshal(opts)
	if _, err := fmt.Fprintf(c, "CONNECT %s\r\nPING\r\n", js); err != nil {
		return err
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("no answer to CONNECT: %w", err)
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "PONG":
			return nil
		case strings.HasPrefix(line, "-ERR"):
			return fmt.Errorf("refused: %s", strings.TrimSpace(strings.TrimPrefix(line, "-ERR")))
		}
	}
}

// openAccess reads the server's INFO line (auth_required) (a
// broker.AccessProbe).
func openAccess(c net.Conn, _ string) (bool, string, error) {
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
