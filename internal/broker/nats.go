package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"pslab/internal/driver"
)

// NATSConfig configures the embedded nats-server child process.
type NATSConfig struct {
	// Port to listen on; 0 picks a free port on loopback, 4222 in a namespace.
	Port int
	// StoreDir is the parent directory of the JetStream store (a fresh
	// subdirectory is made per start and removed at Stop). Default: CacheDir().
	StoreDir string
	// Detached keeps the server running after the starting process exits
	// (`pslab broker start nats`); otherwise it exits with its parent.
	Detached bool
	// LogFile receives the server's log; default a file in the store.
	LogFile string
	// StartTimeout bounds start-up; default 15 s.
	StartTimeout time.Duration
}

// NATS is an embedded nats-server (v2.15.2, JetStream on) that runs as a
// child process: pslab re-executes itself with PSLAB_CHILD=nats-server, so
// the server can live in the broker namespace, apart from the clients.
type NATS struct {
	cfg      NATSConfig
	cmd      *exec.Cmd
	exited   chan struct{}
	store    string
	password string
}

// NewNATS returns an embedded NATS broker, not yet started.
func NewNATS(cfg NATSConfig) *NATS { return &NATS{cfg: cfg} }

// Name implements Broker.
func (n *NATS) Name() string { return "nats" }

// Version implements Broker.
func (n *NATS) Version() string { return "nats-server " + server.VERSION }

// Settings implements Broker.
func (n *NATS) Settings() map[string]string {
	return map[string]string{"jetstream_store": n.store, "auth": "user/password (generated per start)"}
}

// PID implements Broker.
func (n *NATS) PID() int {
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Start implements Broker.
func (n *NATS) Start(ctx context.Context, h Host) (driver.Endpoint, error) {
	if n.cmd != nil {
		return driver.Endpoint{}, errors.New("nats: already started")
	}
	port := n.cfg.Port
	if port == 0 {
		port = 4222
		if _, loop := h.(LoopbackHost); loop {
			p, err := freePort()
			if err != nil {
				return driver.Endpoint{}, err
			}
			port = p
		}
	}
	parent := n.cfg.StoreDir
	if parent == "" {
		parent = filepath.Join(CacheDir(), "nats")
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return driver.Endpoint{}, err
	}
	store, err := os.MkdirTemp(parent, "store-")
	if err != nil {
		return driver.Endpoint{}, err
	}
	n.store = store
	n.password = RandomSecret()
	logPath := n.cfg.LogFile
	if logPath == "" {
		logPath = filepath.Join(store, "nats-server.log")
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return driver.Endpoint{}, err
	}
	defer logf.Close()
	exe, err := os.Executable()
	if err != nil {
		return driver.Endpoint{}, err
	}
	addr := net.JoinHostPort(h.ListenIP(), strconv.Itoa(port))
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(),
		childEnv+"=nats-server",
		"PSLAB_NATS_LISTEN="+addr,
		"PSLAB_NATS_STORE="+store,
		"PSLAB_NATS_USER=pslab",
		"PSLAB_NATS_PASSWORD="+n.password,
		"PSLAB_NATS_DETACHED="+strconv.FormatBool(n.cfg.Detached),
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := h.Start(cmd); err != nil {
		os.RemoveAll(store)
		return driver.Endpoint{}, fmt.Errorf("start nats-server: %w", err)
	}
	n.cmd = cmd
	n.exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(n.exited) }()
	timeout := n.cfg.StartTimeout
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := WaitTCP(wctx, h.Dialer(), addr, n.exited); err != nil {
		_ = n.Stop(context.Background())
		return driver.Endpoint{}, fmt.Errorf("nats-server at %s not ready within %s: %w (log: %s)", addr, timeout, err, logPath)
	}
	return driver.Endpoint{URL: "nats://" + addr, User: "pslab", Password: n.password, Dialer: h.Dialer()}, nil
}

// Stop implements Broker: SIGTERM, then SIGKILL after 10 s; removes the store.
func (n *NATS) Stop(ctx context.Context) error {
	if n.cmd == nil {
		return nil
	}
	err := stopProcessGroup(ctx, n.cmd.Process.Pid, n.exited, 10*time.Second)
	n.cmd = nil
	if n.store != "" {
		os.RemoveAll(n.store)
	}
	return err
}

// stopProcessGroup signals the group led by pid (SIGTERM, SIGKILL after
// grace or when ctx ends) and waits for exited. Every broker uses it.
func stopProcessGroup(ctx context.Context, pid int, exited <-chan struct{}, grace time.Duration) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
		return nil
	case <-time.After(grace):
	case <-ctx.Done():
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("broker process %d did not exit after SIGKILL", pid)
	}
}

// StopDetached stops the process group led by pid, a process this one did
// not start and so cannot wait for (a broker left running by `pslab broker
// start` or by a killed run): as stopProcessGroup, polling until it is gone.
func StopDetached(ctx context.Context, pid int, grace time.Duration) error {
	exited := make(chan struct{})
	go func() {
		for syscall.Kill(pid, 0) == nil {
			time.Sleep(50 * time.Millisecond)
		}
		close(exited)
	}()
	return stopProcessGroup(ctx, pid, exited, grace)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
