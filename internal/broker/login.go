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

// CheckLogin logs in to the broker at e's address with the URL's
// credentials, over the host network, and logs out: a wrong password is
// found before anything runs, not at the first case (CheckReachable only
// dials).
func (e *External) CheckLogin(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", e.host)
	if err != nil {
		return fmt.Errorf("%s at %s is unreachable: %w", e.name, e.host, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	r := bufio.NewReader(c)
	switch {
	case strings.HasPrefix(e.ep.URL, "nats://"):
		err = natsLogin(c, r, e.ep.User, e.ep.Password)
	case strings.HasPrefix(e.ep.URL, "stomp://"), strings.HasPrefix(e.ep.URL, "tcp://"):
		err = stompLogin(c, r, e.host, e.ep.User, e.ep.Password)
	default:
		err = fmt.Errorf("cannot tell how to log in to %s (want nats:// or stomp://)", e.ep.URL)
	}
	if err != nil {
		return fmt.Errorf("%s at %s: login: %w", e.name, e.host, err)
	}
	return nil
}

// natsLogin reads INFO, sends CONNECT with the credentials and a PING: a
// PONG means the server took them, -ERR that it refused them.
func natsLogin(c net.Conn, r *bufio.Reader, user, pass string) error {
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

// stompLogin sends CONNECT with login and passcode: CONNECTED means the
// broker took them, ERROR that it refused them.
func stompLogin(c net.Conn, r *bufio.Reader, host, user, pass string) error {
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
