// Package broker is what every broker process has in common: the Broker
// interface the lab starts, watches and restarts, the Host a broker runs on
// (the machine's loopback, or the lab's broker network namespace), external
// brokers reached by URL, child processes of pslab's own binary and the
// process-group helpers. Each broker's own process code lives in its
// package (internal/brokers/NAME).
package broker

import (
	"context"
	"net"
	"os/exec"
	"time"

	"pslab/internal/driver"
	"pslab/internal/labtls"
)

// Host is where a broker process runs and how clients reach it.
type Host interface {
	// ListenIP is the address the broker binds, e.g. 127.0.0.1 or the broker
	// namespace's veth address.
	ListenIP() string
	// Start starts cmd there (in the broker namespace when emulating a link).
	Start(cmd *exec.Cmd) error
	// Dialer dials the broker from where the clients are; nil means the host
	// network.
	Dialer() driver.Dialer
}

// AdminHost is a Host with a way to the broker that does not cross the
// emulated link: administration (creating streams, purging between cases)
// is the lab's control plane, not part of what is measured, and must not
// queue behind the case's data on a 1 Mbit/s link.
type AdminHost interface {
	AdminDialer() driver.Dialer
}

// AdminDialer is h's administration dialer, nil (use Dialer) when it has none.
func AdminDialer(h Host) driver.Dialer {
	if a, ok := h.(AdminHost); ok {
		return a.AdminDialer()
	}
	return nil
}

// Broker is one running (or startable) broker.
type Broker interface {
	Name() string
	// Start launches the broker on h and waits until it accepts clients.
	Start(ctx context.Context, h Host) (driver.Endpoint, error)
	// Stop shuts it down (gracefully, then by force) and waits for exit.
	Stop(ctx context.Context) error
	// PID of the broker process, for resource sampling; 0 if not running.
	PID() int
	// Version is the broker's version string for result records.
	Version() string
	// Settings are broker-side settings that belong in each result record
	// (e.g. acceptor socket buffer sizes).
	Settings() map[string]string
}

// Watched is a broker whose process the lab checks between cases.
type Watched interface {
	// Exited is nil while the process that Start (or Restart) launched
	// runs, or after a deliberate Stop or Kill; once the process has
	// ended on its own it says how (exit status, last lines of its log).
	Exited() error
}

// LoopbackHost runs brokers on the host's loopback interface.
type LoopbackHost struct{}

// ListenIP implements Host.
func (LoopbackHost) ListenIP() string { return "127.0.0.1" }

// Start implements Host.
func (LoopbackHost) Start(cmd *exec.Cmd) error { return cmd.Start() }

// Dialer implements Host.
func (LoopbackHost) Dialer() driver.Dialer { return nil }

// WaitTCP waits until addr accepts TCP connections through d (nil: host
// network), or ctx ends, or exited is closed (the process died).
func WaitTCP(ctx context.Context, d driver.Dialer, addr string, exited <-chan struct{}) error {
	if d == nil {
		d = &net.Dialer{Timeout: time.Second}
	}
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return errExited
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Restartable is a broker that a fault schedule can kill and start again.
type Restartable interface {
	// Kill stops the broker process abruptly (SIGKILL to its process group), keeping its
	// message store; it returns once the process has exited.
	Kill() error
	// Restart starts it again on the same host, address, port, credentials and store,
	// and returns once it accepts clients (or ctx ends).
	Restart(ctx context.Context) error
}

// TLSServer is a broker that can serve TLS to clients with a certificate
// the lab made (cases with tls: on): ServeTLS, before Start, gives it the
// lab's material; Start then serves TLS (and keeps serving plain
// connections for the lab's administration and the cases without TLS),
// setting the endpoint's TLSURL when TLS has a port of its own.
type TLSServer interface {
	ServeTLS(m *labtls.Material) error
}
