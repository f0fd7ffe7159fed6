package nats

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"pslab/internal/broker"
	"pslab/internal/driver"
)

// ServerConfig configures the embedded nats-server child process.
type ServerConfig struct {
	// Port to listen on; 0 picks a free port on loopback, 4222 in a namespace.
	Port int
	// MonitorPort is the HTTP monitoring port (on the same address as the
	// clients' port); 0 picks a free port on loopback, 8222 in a namespace.
	// The driver reads core NATS subscribers' output buffers from it.
	MonitorPort int
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
	// MQTT opens the server's MQTT listener (nats-mqtt, mqtt.go) on
	// MQTTPort: 0 picks a free port on loopback, 1883 in a namespace.
	MQTT     bool
	MQTTPort int
}

// Server is an embedded nats-server (v2.15.2, JetStream on) that runs as a
// child process: pslab re-executes itself with PSLAB_CHILD=nats-server, so
// the server can live in the broker namespace, apart from the clients.
// It is Restartable: Kill and Restart keep its port, password and
// JetStream store, so file-stored streams, durable consumers and their
// messages survive (memory-stored streams do not).
type Server struct {
	cfg ServerConfig

	mu       sync.Mutex   // guards everything below; PID is read by samplers
	proc     *broker.Proc // from Start to Stop
	host     broker.Host  // set by Start, kept for Restart
	addr     string
	monitor  string // host:port of the HTTP monitoring endpoint
	mqtt     string // host:port of the MQTT listener; "" without
	store    string // kept from Start to Stop, across Kill and Restart
	password string
	logPath  string
	// tlsCert and tlsKey are the lab's server certificate and key
	// (ServeTLS); "": no TLS.
	tlsCert, tlsKey string
}

// NewServer returns an embedded NATS broker, not yet started.
func NewServer(cfg ServerConfig) *Server { return &Server{cfg: cfg} }

// Name implements Broker.
func (n *Server) Name() string { return Name }

// Version implements Broker.
func (n *Server) Version() string { return "nats-server " + server.VERSION }

// Settings implements Broker.
func (n *Server) Settings() map[string]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := map[string]string{"jetstream_store": n.store, "auth": "user/password (generated per start)",
		"monitor":        "http://" + n.monitor + " (connz: what the server holds for core subscribers)",
		"write_timeout":  "retry: a client is closed only if it takes nothing for the write deadline",
		"write_deadline": WriteDeadline.String()}
	if n.tlsCert != "" {
		s["tls"] = tlsSetting
	}
	return s
}

// PID implements Broker. After a Restart it is the new process.
func (n *Server) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return 0
	}
	return n.proc.PID()
}

// Start implements Broker: a fresh store, a fresh password and (on
// loopback) a free port.
func (n *Server) Start(ctx context.Context, h broker.Host) (driver.Endpoint, error) {
	n.mu.Lock()
	if n.proc != nil || n.store != "" {
		n.mu.Unlock()
		return driver.Endpoint{}, errors.New("nats: already started")
	}
	port, err := portOn(h, n.cfg.Port, 4222)
	if err != nil {
		n.mu.Unlock()
		return driver.Endpoint{}, err
	}
	monitorPort, err := portOn(h, n.cfg.MonitorPort, 8222)
	if err != nil {
		n.mu.Unlock()
		return driver.Endpoint{}, err
	}
	parent := n.cfg.StoreDir
	if parent == "" {
		parent = StoreParent(broker.CacheDir())
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		n.mu.Unlock()
		return driver.Endpoint{}, err
	}
	store, err := os.MkdirTemp(parent, "store-")
	if err != nil {
		n.mu.Unlock()
		return driver.Endpoint{}, err
	}
	// Who owns the store: `pslab clean` and later runs remove the stores
	// of owners that are gone (a killed run), never a live one's.
	_ = os.WriteFile(filepath.Join(store, StoreOwnerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	if n.cfg.MQTT {
		mqttPort, err := portOn(h, n.cfg.MQTTPort, MQTTPort)
		if err != nil {
			n.mu.Unlock()
			return driver.Endpoint{}, err
		}
		n.mqtt = net.JoinHostPort(h.ListenIP(), strconv.Itoa(mqttPort))
	}
	n.store, n.password, n.host = store, broker.RandomSecret(), h
	n.addr = net.JoinHostPort(h.ListenIP(), strconv.Itoa(port))
	n.monitor = net.JoinHostPort(h.ListenIP(), strconv.Itoa(monitorPort))
	n.logPath = n.cfg.LogFile
	if n.logPath == "" {
		n.logPath = filepath.Join(store, "nats-server.log")
	}
	command, err := n.commandLocked()
	proc := &broker.Proc{What: "nats-server", Host: h, Log: n.logPath, Addr: n.addr, Timeout: n.cfg.StartTimeout,
		Command: command}
	n.proc = proc
	n.mu.Unlock()
	if err == nil {
		err = proc.Launch(ctx)
	}
	if err != nil {
		_ = n.Stop(context.Background())
		return driver.Endpoint{}, err
	}
	return n.endpoint(), nil
}

func (n *Server) endpoint() driver.Endpoint {
	n.mu.Lock()
	defer n.mu.Unlock()
	return driver.Endpoint{URL: "nats://" + n.addr, User: "pslab", Password: n.password, Dialer: n.host.Dialer(), AdminDialer: broker.AdminDialer(n.host),
		MonitorURL: "http://" + n.monitor}
}

// portOn is the port to listen on for h: the configured one, else a free
// port on loopback (tests and runs share it), else def in a namespace.
func portOn(h broker.Host, configured, def int) (int, error) {
	if configured != 0 {
		return configured, nil
	}
	if _, loop := h.(broker.LoopbackHost); loop {
		return broker.FreePort()
	}
	return def, nil
}

// commandLocked is the command of the child process with n's address,
// store and password. Called with n.mu held.
func (n *Server) commandLocked() (func() *exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(),
		broker.ChildEnv+"="+childName,
		"PSLAB_NATS_LISTEN="+n.addr,
		"PSLAB_NATS_MONITOR="+n.monitor,
		"PSLAB_NATS_STORE="+n.store,
		"PSLAB_NATS_USER=pslab",
		"PSLAB_NATS_PASSWORD="+n.password,
		"PSLAB_NATS_DETACHED="+strconv.FormatBool(n.cfg.Detached),
		"PSLAB_NATS_MQTT="+n.mqtt,
		"PSLAB_NATS_TLS_CERT="+n.tlsCert,
		"PSLAB_NATS_TLS_KEY="+n.tlsKey,
	)
	return func() *exec.Cmd {
		cmd := exec.Command(exe)
		cmd.Env = env
		return cmd
	}, nil
}

// Exited implements Watched.
func (n *Server) Exited() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return nil
	}
	return n.proc.Exited()
}

// Kill implements Restartable: SIGKILL to the server's process group, as a
// crash; the store stays for Restart.
func (n *Server) Kill() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return errors.New("nats: not running")
	}
	return n.proc.Kill()
}

// Restart implements Restartable: the same address, password and store
// (JetStream recovers its file-stored streams and consumers from it).
func (n *Server) Restart(ctx context.Context) error {
	n.mu.Lock()
	proc := n.proc
	n.mu.Unlock()
	if proc == nil {
		return errors.New("nats: restart of a broker that was never started (or was stopped)")
	}
	return proc.Relaunch(ctx)
}

// Stop implements Broker: SIGTERM, then SIGKILL after 10 s; removes the store.
func (n *Server) Stop(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var err error
	if n.proc != nil {
		err = n.proc.Stop(ctx, 10*time.Second)
		n.proc = nil
	}
	if n.store != "" {
		os.RemoveAll(n.store)
		n.store = ""
	}
	return err
}
