package mosquitto

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"pslab/internal/broker"
	"pslab/internal/driver"
)

// Config configures one Mosquitto broker pslab starts.
type Config struct {
	// Port to listen on; 0 picks a free port on loopback, 1883 in the
	// lab's broker namespace.
	Port int
	// Detached marks a broker left running on purpose (`pslab broker
	// start`): leftover clean-up does not stop it.
	Detached bool
	// StartTimeout bounds start-up; default 15 s.
	StartTimeout time.Duration
}

// Mosquitto is a Mosquitto broker run as a child process (on the broker
// CPU set when the lab isolates CPUs, in the lab's broker namespace when
// emulating a link), with a generated password, listening on one address
// only. Its run directory holds the configuration, the password file, the
// persistence file, the pid file and the log; Stop removes it. It is
// Restartable: Kill and Restart keep the directory, address and password.
type Mosquitto struct {
	cfg Config

	mu          sync.Mutex
	proc        *broker.Proc // from Start to Stop
	host        broker.Host
	conf        config
	dir         string
	password    string
	persistence bool // as the running configuration has it
	version     string
}

// Binary is the Mosquitto executable pslab runs (Debian's package puts it
// in /usr/sbin).
func Binary() (string, error) {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("mosquitto is not installed (`pslab broker install mosquitto`, or apt-get install mosquitto)")
}

// BinaryVersion is the installed Mosquitto's version, e.g. "2.0.11".
func BinaryVersion() (string, error) {
	bin, err := Binary()
	if err != nil {
		return "", err
	}
	out, _ := exec.Command(bin, "-h").CombinedOutput() // exits 3 after the help
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "mosquitto version "); ok {
			return strings.Fields(v)[0], nil
		}
	}
	return "", fmt.Errorf("%s -h: no version in %q", bin, firstLine(string(out)))
}

// New returns a Mosquitto broker, not yet started.
func New(cfg Config) *Mosquitto { return &Mosquitto{cfg: cfg} }

// Name implements broker.Broker.
func (m *Mosquitto) Name() string { return Name }

// Version implements broker.Broker.
func (m *Mosquitto) Version() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.version == "" {
		m.version, _ = BinaryVersion()
	}
	return "mosquitto " + m.version
}

// Settings implements broker.Broker.
func (m *Mosquitto) Settings() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.conf.settings()
	s["run_dir"] = m.dir
	if m.conf.User != "" {
		s["user"] = m.conf.User + " (Mosquitto drops root after reading its configuration)"
	}
	return s
}

// PID implements broker.Broker.
func (m *Mosquitto) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil {
		return 0
	}
	return m.proc.PID()
}

// Dir is the run directory ("" before Start and after Stop).
func (m *Mosquitto) Dir() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dir
}

// Start implements broker.Broker.
func (m *Mosquitto) Start(ctx context.Context, h broker.Host) (driver.Endpoint, error) {
	bin, err := Binary()
	if err != nil {
		return driver.Endpoint{}, err
	}
	m.mu.Lock()
	if m.proc != nil || m.dir != "" {
		m.mu.Unlock()
		return driver.Endpoint{}, errors.New("mosquitto: already started")
	}
	port := m.cfg.Port
	if port == 0 {
		if _, loop := h.(broker.LoopbackHost); loop {
			if port, err = broker.FreePort(); err != nil {
				m.mu.Unlock()
				return driver.Endpoint{}, err
			}
		} else {
			port = 1883
		}
	}
	runAs := dropTo()
	dir, err := newRunDir(runAs, m.cfg.Detached)
	if err != nil {
		m.mu.Unlock()
		return driver.Endpoint{}, err
	}
	m.dir, m.host, m.password = dir, h, broker.RandomSecret()
	m.conf = config{ListenIP: h.ListenIP(), Port: port, Dir: dir, User: runAs}
	err = m.writeFilesLocked()
	proc := &broker.Proc{What: "mosquitto", Host: h, Log: m.logPath(), Addr: m.addrLocked(), Timeout: m.cfg.StartTimeout,
		Command: func() *exec.Cmd { return exec.Command(bin, "-c", m.confPath()) }}
	m.proc = proc
	m.mu.Unlock()
	if err == nil {
		err = proc.Launch(ctx)
	}
	if err != nil {
		_ = m.Stop(context.Background())
		return driver.Endpoint{}, err
	}
	m.noteRunning()
	return m.endpoint(), nil
}

func (m *Mosquitto) endpoint() driver.Endpoint {
	m.mu.Lock()
	defer m.mu.Unlock()
	ep := driver.Endpoint{URL: "mqtt://" + m.addrLocked(), User: User, Password: m.password, Dialer: m.host.Dialer()}
	if a, ok := m.host.(broker.AdminHost); ok {
		ep.AdminDialer = a.AdminDialer()
	}
	return ep
}

func (m *Mosquitto) addrLocked() string {
	return net.JoinHostPort(m.conf.ListenIP, strconv.Itoa(m.conf.Port))
}

// User is the user name of pslab's Mosquitto brokers.
const User = "pslab"

// writeFilesLocked writes the password file and the configuration (mode
// 0600, owned by the user Mosquitto runs as).
func (m *Mosquitto) writeFilesLocked() error {
	line, err := passwordLine(User, m.password)
	if err != nil {
		return err
	}
	if err := writeOwned(filepath.Join(m.dir, "passwd"), []byte(line), m.conf.User); err != nil {
		return err
	}
	m.conf.Persistence = m.persistence
	return writeOwned(m.confPath(), []byte(m.conf.render()), m.conf.User)
}

func (m *Mosquitto) confPath() string { return filepath.Join(m.dir, "mosquitto.conf") }
func (m *Mosquitto) logPath() string  { return filepath.Join(m.dir, "mosquitto.log") }

// Exited implements broker.Watched.
func (m *Mosquitto) Exited() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil {
		return nil
	}
	return m.proc.Exited()
}

// Kill implements broker.Restartable: SIGKILL, as a crash; the run
// directory (and with persistence on, mosquitto.db as last written) stays.
func (m *Mosquitto) Kill() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil {
		return errors.New("mosquitto: not running")
	}
	return m.proc.Kill()
}

// Restart implements broker.Restartable: the same configuration, address,
// password and persistence file.
func (m *Mosquitto) Restart(ctx context.Context) error {
	m.mu.Lock()
	proc := m.proc
	m.mu.Unlock()
	if proc == nil {
		return errors.New("mosquitto: restart of a broker that was never started (or was stopped)")
	}
	return proc.Relaunch(ctx)
}

// Stop implements broker.Broker: SIGTERM (Mosquitto writes its store and
// exits), SIGKILL after 10 s; then the run directory is removed.
func (m *Mosquitto) Stop(ctx context.Context) error {
	m.forget()
	m.mu.Lock()
	defer m.mu.Unlock()
	var err error
	if m.proc != nil {
		err = m.proc.Stop(ctx, 10*time.Second)
		m.proc = nil
	}
	if m.dir != "" {
		os.RemoveAll(m.dir)
		m.dir = ""
	}
	return err
}

// setPersistence makes the running broker's persistence on, reloading its
// configuration (SIGHUP) when it changes, and waits until the reload is
// logged.
func (m *Mosquitto) setPersistence(ctx context.Context, on bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil || m.proc.PID() == 0 {
		return errors.New("mosquitto: not running")
	}
	if m.persistence == on {
		return nil
	}
	before := countInFile(m.logPath(), "Reloading config")
	m.persistence = on
	m.conf.Persistence = on
	if err := writeOwned(m.confPath(), []byte(m.conf.render()), m.conf.User); err != nil {
		return err
	}
	if err := m.proc.Signal(syscall.SIGHUP); err != nil {
		return fmt.Errorf("mosquitto: reload its configuration: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for countInFile(m.logPath(), "Reloading config") <= before {
		if time.Now().After(deadline) {
			return fmt.Errorf("mosquitto: configuration reload (persistence %t) not logged within 10 s (log: %s)", on, m.logPath())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.proc.Done():
			return fmt.Errorf("mosquitto exited while reloading its configuration; last output: %s", broker.TailFile(m.logPath(), 3))
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Persistence tells whether the running configuration has persistence on.
func (m *Mosquitto) Persistence() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.persistence
}

// dropTo is the user Mosquitto runs as: "mosquitto" (Debian's package
// makes it) when pslab runs as root, so that the broker drops root after
// reading its configuration; "" otherwise (it runs as pslab's user).
func dropTo() string {
	if os.Geteuid() != 0 {
		return ""
	}
	if _, err := user.Lookup("mosquitto"); err != nil {
		return "root"
	}
	return "mosquitto"
}

// writeOwned writes data to path with mode 0600, owned by the user name
// (nothing changes for "" or root).
func writeOwned(path string, data []byte, name string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := chown(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

func chown(path, name string) error {
	if name == "" || name == "root" {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

// countInFile counts the lines of path that contain s.
func countInFile(path, s string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(s)) {
			n++
		}
	}
	return n
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
