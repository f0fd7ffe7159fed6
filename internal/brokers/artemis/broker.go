package artemis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"pslab/internal/broker"
	"pslab/internal/driver"
)

// ArtemisConfig says which ActiveMQ Artemis to install and how to run it.
// Zero fields take the defaults noted.
type ArtemisConfig struct {
	Version  string // distribution version; default 2.44.0
	CacheDir string // default CacheDir(): $PSLAB_CACHE, $XDG_CACHE_HOME/pslab or ~/.cache/pslab
	// Instance names the broker instance directory (configuration, journal,
	// credentials) under CacheDir/artemis/instances; default "default".
	// Tests use their own so that they never touch a user's instance.
	Instance string
	HeapMB   int // JVM -Xms/-Xmx; default 1024
	// SocketBufferBytes is tcpSendBufferSize and tcpReceiveBufferSize of the
	// acceptors; default 1 MiB (what `artemis create` writes). At 1 Mbit/s
	// 1 MiB is about 8 s of data queued in one socket.
	SocketBufferBytes int
	Port              int           // STOMP port; default 61613
	CorePort          int           // CORE port for `artemis perf client`; default 61616
	MQTTPort          int           // MQTT port for artemis-mqtt; 0: any free one (not measured)
	TLSPort           int           // STOMP over TLS (tls: on cases, ServeTLS); default 61614
	StartTimeout      time.Duration // default 60 s
}

// Artemis defaults.
const (
	DefaultArtemisVersion = "2.44.0"
	artemisUser           = "pslab"
)

func (c ArtemisConfig) withDefaults() ArtemisConfig {
	if c.Version == "" {
		c.Version = DefaultArtemisVersion
	}
	if c.CacheDir == "" {
		c.CacheDir = broker.CacheDir()
	}
	if c.Instance == "" {
		c.Instance = "default"
	}
	if c.HeapMB <= 0 {
		c.HeapMB = 1024
	}
	if c.SocketBufferBytes <= 0 {
		c.SocketBufferBytes = 1 << 20
	}
	if c.Port <= 0 {
		c.Port = 61613
	}
	if c.CorePort <= 0 {
		c.CorePort = 61616
	}
	if c.TLSPort <= 0 {
		c.TLSPort = 61614
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 60 * time.Second
	}
	return c
}

// Artemis is an ActiveMQ Artemis broker run from its distribution.
type Artemis struct {
	cfg ArtemisConfig

	mu      sync.Mutex
	run     *artemisRun // nil when not running
	version string      // from the CONNECTED frame once running
	host    broker.Host // of the last Start, for Restart
	// tlsKeystore is the lab's key and certificate as a PEM keystore
	// (ServeTLS); "": no TLS acceptor.
	tlsKeystore string
}

// artemisRun is one broker process.
type artemisRun struct {
	cmd     *exec.Cmd
	ip      string        // where the acceptors listen
	exited  chan struct{} // closed when the process has exited and been reaped
	waitErr error         // valid once exited is closed
}

// NewArtemis returns an Artemis for cfg; nothing is started or installed.
func NewArtemis(cfg ArtemisConfig) *Artemis {
	return &Artemis{cfg: cfg.withDefaults()}
}

// Config is the configuration with defaults filled in.
func (a *Artemis) Config() ArtemisConfig { return a.cfg }

func (a *Artemis) root() string { return filepath.Join(a.cfg.CacheDir, "artemis") }

// HomeDir is the unpacked distribution (ARTEMIS_HOME).
func (a *Artemis) HomeDir() string {
	return filepath.Join(a.root(), "apache-artemis-"+a.cfg.Version)
}

// InstanceDir is the broker instance (ARTEMIS_INSTANCE).
func (a *Artemis) InstanceDir() string {
	return filepath.Join(a.root(), "instances", a.cfg.Instance+"-"+a.cfg.Version)
}

// CredentialsFile holds the instance's user and generated password (0600).
func (a *Artemis) CredentialsFile() string {
	return filepath.Join(a.InstanceDir(), "pslab-credentials")
}

func (a *Artemis) pidFile() string { return filepath.Join(a.InstanceDir(), "pslab-broker.pid") }

// RunLog is where the broker's console output of the last start goes.
func (a *Artemis) RunLog() string { return filepath.Join(a.InstanceDir(), "log", "pslab-run.log") }

// Name implements Broker.
func (a *Artemis) Name() string { return Name }

// Version implements Broker: the version the running broker reported, or
// the configured one.
func (a *Artemis) Version() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.version != "" {
		return a.version
	}
	return a.cfg.Version
}

// PID implements Broker.
func (a *Artemis) PID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run == nil {
		return 0
	}
	return a.run.cmd.Process.Pid
}

// Credentials reads the user and password of the instance.
func (a *Artemis) Credentials() (user, password string, err error) {
	b, err := os.ReadFile(a.CredentialsFile())
	if err != nil {
		return "", "", fmt.Errorf("artemis credentials: %w (run \"pslab broker install artemis\")", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case ok && k == "user":
			user = v
		case ok && k == "password":
			password = v
		}
	}
	if user == "" || password == "" {
		return "", "", fmt.Errorf("artemis credentials file %s lacks user= or password= lines", a.CredentialsFile())
	}
	return user, password, nil
}

// Start implements Broker: it runs the instance's `bin/artemis run` on h
// (STOMP and CORE acceptors bound to h.ListenIP()), waits for the STOMP
// port, and checks a real STOMP login with the instance's credentials.
func (a *Artemis) Start(ctx context.Context, h broker.Host) (driver.Endpoint, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != nil {
		return driver.Endpoint{}, errors.New("artemis is already running")
	}
	if !a.Installed() {
		return driver.Endpoint{}, fmt.Errorf("artemis %s is not installed under %s: run \"pslab broker install artemis\"",
			a.cfg.Version, a.root())
	}
	if pid := a.leftover(); pid > 0 {
		return driver.Endpoint{}, fmt.Errorf("artemis instance %s is already running as PID %d (left by a killed run?): "+
			"stop it with \"pslab broker stop artemis\" or kill -- -%d", a.InstanceDir(), pid, pid)
	}
	user, pass, err := a.Credentials()
	if err != nil {
		return driver.Endpoint{}, err
	}
	if err := pinSyncTimeouts(filepath.Join(a.InstanceDir(), "etc", "broker.xml")); err != nil {
		return driver.Endpoint{}, fmt.Errorf("artemis: %w", err)
	}
	if err := a.upgradeAcceptors(); err != nil {
		return driver.Endpoint{}, err
	}
	if err := a.syncTLSAcceptor(filepath.Join(a.InstanceDir(), "etc", "broker.xml")); err != nil {
		return driver.Endpoint{}, fmt.Errorf("artemis: %w", err)
	}
	ip := h.ListenIP()
	addr := net.JoinHostPort(ip, strconv.Itoa(a.cfg.Port))
	ep := driver.Endpoint{URL: "stomp://" + addr, User: user, Password: pass, Dialer: h.Dialer(), AdminDialer: broker.AdminDialer(h)}
	if a.tlsKeystore != "" {
		ep.TLSURL = "stomp://" + net.JoinHostPort(ip, strconv.Itoa(a.cfg.TLSPort))
	}

	// A restart keeps the previous process's log (why it ended) beside.
	_ = os.Rename(a.RunLog(), a.RunLog()+".prev")
	logf, err := os.OpenFile(a.RunLog(), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return driver.Endpoint{}, fmt.Errorf("artemis: %w", err)
	}
	cmd := exec.Command(filepath.Join(a.InstanceDir(), "bin", "artemis"), "run")
	cmd.Dir = a.InstanceDir()
	cmd.Env = append(cleanEnv(os.Environ()), "JAVA_ARGS_APPEND="+a.javaArgs(ip))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Stop signals the whole group
	if err := h.Start(cmd); err != nil {
		logf.Close()
		return driver.Endpoint{}, fmt.Errorf("artemis: start %s: %w", cmd.Path, err)
	}
	run := &artemisRun{cmd: cmd, ip: ip, exited: make(chan struct{})}
	a.run, a.host = run, h
	os.WriteFile(a.pidFile(), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600)
	go func() {
		run.waitErr = cmd.Wait()
		logf.Close()
		close(run.exited)
	}()

	server, err := a.waitReady(ctx, ep, run)
	if err == nil {
		err = a.waitTLS(ctx, ep, run)
	}
	if err != nil {
		a.stopLocked(ctx)
		return driver.Endpoint{}, err
	}
	a.version = versionFromServer(server, a.cfg.Version)
	return ep, nil
}

// javaArgs are appended to the instance profile's JAVA_ARGS; the later
// -Xms/-Xmx win, the -D properties fill broker.xml's ${pslab.*} placeholders.
func (a *Artemis) javaArgs(ip string) string {
	args := fmt.Sprintf("-Xms%dm -Xmx%dm -Dpslab.host=%s -Dpslab.stomp.port=%d -Dpslab.core.port=%d -Dpslab.mqtt.port=%d -Dpslab.socket.buffer=%d",
		a.cfg.HeapMB, a.cfg.HeapMB, ip, a.cfg.Port, a.cfg.CorePort, a.cfg.MQTTPort, a.cfg.SocketBufferBytes)
	if a.tlsKeystore != "" {
		args += fmt.Sprintf(" -Dpslab.stomp.tls.port=%d -Dpslab.tls.keystore=%s", a.cfg.TLSPort, a.tlsKeystore)
	}
	return args
}

// cleanEnv drops variables that would change how bin/artemis runs.
func cleanEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "JAVA_ARGS" || k == "JAVA_ARGS_APPEND" || k == "DEBUG_ARGS" || strings.HasPrefix(k, "ARTEMIS_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// waitReady waits for the STOMP port, then for a successful login.
func (a *Artemis) waitReady(ctx context.Context, ep driver.Endpoint, run *artemisRun) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.StartTimeout)
	defer cancel()
	addr := strings.TrimPrefix(ep.URL, "stomp://")
	exited := run.exited
	notReady := func(err error) error {
		select {
		case <-exited:
			return fmt.Errorf("artemis exited during start-up (%v); last output: %s (full log: %s)",
				run.waitErr, broker.TailFile(a.RunLog(), 3), a.RunLog())
		default:
		}
		return fmt.Errorf("artemis did not accept STOMP logins on %s within %s (%v); last output: %s (full log: %s)",
			addr, a.cfg.StartTimeout, err, broker.TailFile(a.RunLog(), 3), a.RunLog())
	}
	if err := broker.WaitTCP(ctx, ep.Dialer, addr, exited); err != nil {
		return "", notReady(err)
	}
	for {
		server, err := CheckSTOMP(ctx, ep)
		if err == nil {
			return server, nil
		}
		if errors.Is(err, ErrLoginRefused) {
			return "", fmt.Errorf("artemis at %s refused user %q with the password in %s: that file does not match "+
				"the instance's etc/artemis-users.properties; remove %s and run \"pslab broker install artemis\" to recreate the instance",
				addr, ep.User, a.CredentialsFile(), a.InstanceDir())
		}
		select {
		case <-ctx.Done():
			return "", notReady(err)
		case <-exited:
			return "", notReady(err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// versionFromServer takes "2.44.0" out of "ActiveMQ-Artemis/2.44.0 ...".
func versionFromServer(server, fallback string) string {
	_, rest, ok := strings.Cut(server, "/")
	if !ok {
		return fallback
	}
	v, _, _ := strings.Cut(rest, " ")
	if v == "" {
		return fallback
	}
	return v
}
