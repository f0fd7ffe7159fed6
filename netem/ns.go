package netem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netnsDir is where named network namespaces are bind-mounted (as iproute2
// does, so `ip netns` sees them too).
const netnsDir = "/run/netns"

// onNSThread runs fn on a fresh goroutine whose OS thread is locked; fn
// may switch that thread into another network namespace (netns.Set, or
// netns.New and NewNamed, which enter the namespace they make), and the
// thread is switched back to the namespace it had before it is unlocked.
// The caller's own thread is never touched. If the thread cannot be
// switched back it stays locked, and the runtime kills it when the
// goroutine ends, so no goroutine ever runs in the wrong namespace by
// accident. Every namespace switch of netem goes through here.
func onNSThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("get current netns: %w", err)
			return
		}
		defer orig.Close()
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			// Leave the thread locked: it dies with this goroutine.
			errc <- errors.Join(ferr, fmt.Errorf("restore netns: %w", err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// inNS runs fn on a thread switched into ns (onNSThread). Sockets created
// by fn keep ns after return; processes forked by fn start in ns.
func inNS(ns netns.NsHandle, fn func() error) error {
	return onNSThread(func() error {
		if err := netns.Set(ns); err != nil {
			return fmt.Errorf("enter netns: %w", err)
		}
		return fn()
	})
}

// inNamedNS is inNS for a namespace given by name: the name of one of the
// lab's own namespaces, or the ref of a foreign one (see foreignNS.ref).
func inNamedNS(name string, fn func() error) error {
	ns, err := openNS(name)
	if err != nil {
		return err
	}
	defer ns.Close()
	return inNS(ns, fn)
}

// openNS opens a named namespace, saying clearly when it does not exist. A
// foreign namespace's ref is opened through its pid, checking its inode.
func openNS(name string) (netns.NsHandle, error) {
	if f, ok := parseForeignRef(name); ok {
		return f.open()
	}
	ns, err := netns.GetFromName(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return netns.None(), fmt.Errorf("network namespace %s does not exist (is the lab up?)", name)
		}
		return netns.None(), fmt.Errorf("open network namespace %s: %w", name, err)
	}
	return ns, nil
}

// createNamedNS creates a new network namespace bind-mounted at
// /run/netns/name, from a throw-away thread (onNSThread).
func createNamedNS(name string) error {
	err := onNSThread(func() error {
		ns, err := netns.NewNamed(name) // switches this thread into the new ns
		if err == nil {
			ns.Close()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create network namespace %s: %w", name, err)
	}
	return nil
}

// namedNSExists reports whether /run/netns/name exists.
func namedNSExists(name string) bool {
	_, err := os.Stat(filepath.Join(netnsDir, name))
	return err == nil
}

// nsExists is namedNSExists for a name or a foreign ref.
func nsExists(name string) bool {
	if _, ok := parseForeignRef(name); !ok {
		return namedNSExists(name)
	}
	ns, err := openNS(name)
	if err != nil {
		return false
	}
	ns.Close()
	return true
}

// deleteNamedNS unmounts and removes /run/netns/name. The namespace itself
// (and the veths, IFB and nft tables inside) goes away once no process and no
// open handle holds it. Missing or stale entries are not an error.
func deleteNamedNS(name string) error {
	p := filepath.Join(netnsDir, name)
	if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount %s: %w", p, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}

// pidsInNS lists the processes whose network namespace is the one mounted at
// /run/netns/name (they keep it alive after the mount is gone), or the
// foreign one a ref names.
func pidsInNS(name string) []int {
	var want unix.Stat_t
	if _, ok := parseForeignRef(name); ok {
		ns, err := openNS(name)
		if err != nil {
			return nil
		}
		err = unix.Fstat(int(ns), &want)
		ns.Close()
		if err != nil {
			return nil
		}
	} else if err := unix.Stat(filepath.Join(netnsDir, name), &want); err != nil {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st) == nil && st.Ino == want.Ino && st.Dev == want.Dev {
			pids = append(pids, pid)
		}
	}
	return pids
}

// withHandle runs fn with a netlink handle whose sockets live in the named
// namespace (created on a locked thread inside it).
func withHandle(nsName string, fn func(h *netlink.Handle) error) error {
	var h *netlink.Handle
	err := inNamedNS(nsName, func() error {
		var err error
		h, err = netlink.NewHandle()
		return err
	})
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", nsName, err)
	}
	defer h.Close()
	return fn(h)
}

// writeSysctl writes a /proc/sys file from inside the named namespace
// (net.* sysctls are per namespace, resolved by the writing thread).
func writeSysctl(nsName, path, value string) error {
	return inNamedNS(nsName, func() error {
		return os.WriteFile(path, []byte(value), 0o644)
	})
}

// readSysctl reads a /proc/sys file from inside the named namespace.
func readSysctl(nsName, path string) (string, error) {
	var v string
	err := inNamedNS(nsName, func() error {
		b, err := os.ReadFile(path)
		v = strings.TrimSpace(string(b))
		return err
	})
	return v, err
}
