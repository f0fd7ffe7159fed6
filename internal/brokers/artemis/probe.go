package artemis

import (
	"bufio"
	"fmt"
	"net"
	"strings"
)

// login sends CONNECT with login and passcode: CONNECTED means the
// broker took them, ERROR that it refused them (a broker.Login).
func login(c net.Conn, host, user, pass string) error {
	r := bufio.NewReader(c)
	h, _, _ := net.SplitHostPort(host)
	frame := fmt.Sprintf("CONNECT\naccept-version:1.2\nhost:%s\n", h)
	if user != "" {
		frame += fmt.Sprintf("login:%s\npasscode:%s\n", user, pass)
	}
	if _, err := fmt.Fprintf(c, "%s\n\x00", frame); err != nil {
		return err
	}
	cmd, err := r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("no answer to CONNECT: %w", err)
	}
	switch strings.TrimSpace(cmd) {
	case "CONNECTED":
		_, _ = fmt.Fprint(c, "DISCONNECT\n\n\x00")
		return nil
	case "ERROR":
		msg := ""
		for {
			l, err := r.ReadString('\n')
			if err != nil || strings.TrimSpace(l) == "" {
				break
			}
			if v, ok := strings.CutPrefix(l, "message:"); ok {
				msg = strings.TrimSpace(v)
			}
		}
		return fmt.Errorf("refused (ERROR %s)", msg)
	}
	return fmt.Errorf("not a STOMP broker: answered %q", cmd)
}

// openAccess sends a CONNECT without login and reads the answer (a
// broker.AccessProbe).
func openAccess(c net.Conn, host string) (bool, string, error) {
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
