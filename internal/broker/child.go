package broker

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"pslab/internal/cpuset"
)

// ChildEnv names the environment variable that turns a pslab (or test)
// binary into a broker child process: a broker package that runs its
// broker inside pslab's own binary (as a process of its own, so it can
// live in the broker namespace) registers the child with RegisterChild
// and starts the binary with ChildEnv=<name>.
const ChildEnv = "PSLAB_CHILD"

var (
	childrenMu sync.Mutex
	children   = map[string]func() error{}
)

// RegisterChild makes run the body of the child process name (from the
// broker package's init). It panics on a duplicate name.
func RegisterChild(name string, run func() error) {
	childrenMu.Lock()
	defer childrenMu.Unlock()
	if _, dup := children[name]; dup {
		panic("broker: child " + name + " registered twice")
	}
	children[name] = run
}

// RunChildIfRequested runs the broker child named by PSLAB_CHILD and exits
// the process, or returns at once when the variable is unset. Call it first
// thing in main and in TestMain of packages that start brokers.
func RunChildIfRequested() {
	cpuset.ExecIfRequested() // a broker started on its own CPUs: exec it
	name := os.Getenv(ChildEnv)
	if name == "" {
		return
	}
	childrenMu.Lock()
	run, ok := children[name]
	childrenMu.Unlock()
	if !ok {
		fmt.Fprintf(os.Stderr, "pslab: unknown %s=%q\n", ChildEnv, name)
		os.Exit(2)
	}
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "pslab %s: %v\n", name, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// WatchParent closes orphaned when the parent process dies (a crashed or
// killed pslab must not leave a broker behind).
func WatchParent(orphaned chan<- struct{}) {
	ppid := os.Getppid()
	for {
		time.Sleep(250 * time.Millisecond)
		if os.Getppid() != ppid {
			close(orphaned)
			return
		}
	}
}

// RandomSecret returns a fresh random credential: 192 bits of crypto/rand,
// base64url (nothing that needs escaping in a URL, a STOMP header or a
// shell).
func RandomSecret() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// CacheDir is pslab's cache: $PSLAB_CACHE, else $XDG_CACHE_HOME/pslab, else
// ~/.cache/pslab.
func CacheDir() string {
	if d := os.Getenv("PSLAB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "pslab")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "pslab-cache")
	}
	return filepath.Join(home, ".cache", "pslab")
}

// ProcessAlive is true for a running, non-zombie process.
func ProcessAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// state follows the ")" closing the command name
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == ')' && i+2 < len(data) {
			return data[i+2] != 'Z'
		}
	}
	return true
}

// RunTests is the TestMain of every test package that starts brokers: it
// runs the broker child when the test binary was started as one, and the
// tests otherwise. Call it as func TestMain(m *testing.M) { broker.RunTests(m) }.
func RunTests(m interface{ Run() int }) {
	RunChildIfRequested()
	os.Exit(m.Run())
}
