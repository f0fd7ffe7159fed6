package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// natsServer runs an in-process nats-server on loopback, with or without
// a password.
func natsServer(t *testing.T, password string) string {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	if password != "" {
		opts.Username, opts.Password = "u", password
	}
	s, err := server.NewServer(opts)
	require.NoError(t, err)
	go s.Start()
	require.True(t, s.ReadyForConnections(10*time.Second))
	t.Cleanup(s.Shutdown)
	return fmt.Sprintf("nats://%s", s.Addr())
}

// stompStub answers every connection's first frame with answer.
func stompStub(t *testing.T, answer string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = bufio.NewReader(c).ReadString(0)
				fmt.Fprintf(c, "%s\n\n\x00", answer)
			}()
		}
	}()
	return "stomp://" + ln.Addr().String()
}

// TestDoctorWarnsAboutOpenBrokers: a broker that lets anyone in gets a
// WARNING line; one that requires a login gets ok.
func TestDoctorWarnsAboutOpenBrokers(t *testing.T) {
	var out bytes.Buffer
	doctorURLs(context.Background(), &out, map[string]string{
		"nats":      natsServer(t, ""),
		"nats-auth": natsServer(t, "secret"),
		"stomp":     stompStub(t, "CONNECTED\nversion:1.2"),
		"stomp-ok":  stompStub(t, "ERROR\nmessage:login required"),
	})
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 4, out.String())
	assert.Regexp(t, `^WARNING +nats .*no authentication is required`, string(lines[0]))
	assert.Regexp(t, `^ok +nats-auth .*auth_required`, string(lines[1]))
	assert.Regexp(t, `^WARNING +stomp .*answered CONNECTED`, string(lines[2]))
	assert.Regexp(t, `^ok +stomp-ok .*refused`, string(lines[3]))
}
