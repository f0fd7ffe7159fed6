package nats

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"pslab/internal/broker"
)

// childName is the broker child (broker.RegisterChild) that runs the
// embedded nats-server in a process of its own.
const childName = "nats-server"

func init() { broker.RegisterChild(childName, serveNATS) }

func serveNATS() error {
	host, portStr, err := net.SplitHostPort(os.Getenv("PSLAB_NATS_LISTEN"))
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return err
	}
	// HTTP monitoring, on the clients' address (Server always sets
	// it; a server started by hand, as some tests do, may go without): the
	// driver reads the output buffers of core subscribers from /connz
	// (what the server still holds for them when a case's drain ends).
	var monitorHost string
	var monitorPort int
	if m := os.Getenv("PSLAB_NATS_MONITOR"); m != "" {
		h, p, err := net.SplitHostPort(m)
		if err != nil {
			return fmt.Errorf("PSLAB_NATS_MONITOR: %w", err)
		}
		if monitorPort, err = strconv.Atoi(p); err != nil {
			return fmt.Errorf("PSLAB_NATS_MONITOR: %w", err)
		}
		monitorHost = h
	}
	opts := Options(host, port, monitorHost, monitorPort, os.Getenv("PSLAB_NATS_STORE"),
		os.Getenv("PSLAB_NATS_USER"), os.Getenv("PSLAB_NATS_PASSWORD"))
	if m := os.Getenv("PSLAB_NATS_MQTT"); m != "" {
		h, p, err := net.SplitHostPort(m)
		if err != nil {
			return fmt.Errorf("PSLAB_NATS_MQTT: %w", err)
		}
		mp, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("PSLAB_NATS_MQTT: %w", err)
		}
		WithMQTT(opts, h, mp)
	}
	if err := tlsFromEnv(opts); err != nil {
		return err
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return err
	}
	s.ConfigureLogger()
	go s.Start()
	if !s.ReadyForConnections(15 * time.Second) {
		return fmt.Errorf("not ready for connections")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	orphaned := make(chan struct{})
	if os.Getenv("PSLAB_NATS_DETACHED") != "true" {
		go broker.WatchParent(orphaned)
	}
	select {
	case <-sig:
	case <-orphaned:
		fmt.Fprintln(os.Stderr, "pslab nats-server: parent process gone, shutting down")
	}
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}

// WriteDeadline is the embedded nats-server's write deadline: a
// client that takes nothing for this long is closed (see serveNATS).
const WriteDeadline = 2 * time.Minute

// MaxConn is the embedded nats-server's connection limit (its
// MaxConn): cases with more clients are refused before anything runs.
const MaxConn = 4096

// StoreOwnerFile, in an embedded NATS store, holds the pid of the pslab
// process that started that broker (see internal/cleanup).
const StoreOwnerFile = "pslab-owner.pid"

// Options are the embedded nats-server's settings: the child process runs
// with them, and so does an in-process server in tests
// (internal/testbroker), so both are the same server. A port of -1 picks
// a free one; a monitorPort of 0 opens no monitoring endpoint.
func Options(host string, port int, monitorHost string, monitorPort int, store, user, password string) *server.Options {
	return &server.Options{
		ServerName: "pslab",
		Host:       host,
		Port:       port,
		HTTPHost:   monitorHost,
		HTTPPort:   monitorPort,
		JetStream:  true,
		StoreDir:   store,
		Username:   user,
		Password:   password,
		NoSigs:     true,
		// 800-connection cases: leave room.
		MaxConn: MaxConn,
		// A client on the emulated 1 Mbit/s lossy link may need several
		// seconds (SYN and segment retransmissions) to send CONNECT; the
		// default 2 s would refuse it. Connection set-up is not measured.
		AuthTimeout: 30,
		// The server PINGs a new client 2 s after accepting it unless told
		// otherwise; on the lossy link a handshake still under way then sees
		// PING where nats.go expects the PONG to its own, and the connect
		// fails ("expected 'PONG', got 'PING'", seen with 100 clients on
		// wifi-paper). The regular ping interval still applies.
		DisableShortFirstPing: true,
		// A write to a client that takes longer than the write deadline
		// (10 s) closes the client as a slow consumer, by default even when
		// the write made progress. Over the emulated 1 Mbit/s link a
		// subscriber of a fan-out gets 10-20 kbit/s, so any write of more
		// than a few tens of KB outlasts the deadline: in the first
		// wifi-paper records of the reproduction (2026-11-24) the four labs'
		// servers closed 880 subscriber connections this way in 15 min, and
		// core NATS lost, JetStream redelivered, what each was owed. Retry
		// (the server's own policy for routes, gateways and leaf nodes)
		// closes only a client that takes nothing for the whole deadline;
		// with 10 s it still closed 15 of 50 subscribers of a 1/50/1 quick
		// case (TCP's retransmission back-off over the lossy link), so the
		// deadline is TCP's own longest back-off, 2 min (TCP_RTO_MAX).
		WriteTimeout:  server.WriteTimeoutPolicyRetry,
		WriteDeadline: WriteDeadline,
	}
}
