package netem

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrInUse is wrapped when a live Lab (in this or another process) holds
// the lab with the same prefix: its namespaces are not leftovers and are
// not removed.
var ErrInUse = errors.New("lab in use")

// A lab is held with an open-file-description lock (F_OFD_SETLK) on
// /run/pslab-<prefix>.lock from Up to Down. The kernel drops the lock when
// the holder's file closes, which a crash or kill does too, so namespaces
// without a holder are a crashed run's leftovers and Cleanup removes them;
// while a holder lives, Cleanup and Up refuse. OFD locks (unlike classic
// POSIX record locks) are not lost when the process closes some other
// descriptor of the file, and they conflict between two Labs of one process.
// A lab whose broker side is another process's namespace also has a state
// file next to the lock, /run/pslab-<prefix>.broker (see foreign.go), so
// that whoever cleans up later knows where its veth end is.
func lockPath(prefix string) string { return "/run/pslab-" + prefix + ".lock" }

// acquireLock takes the lab's lock and returns the file holding it.
func acquireLock(prefix string) (*os.File, error) {
	f, err := os.OpenFile(lockPath(prefix), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("netem: lock file: %w", err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, inUseErr(prefix)
		}
		return nil, fmt.Errorf("netem: lock %s: %w", lockPath(prefix), err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// lockHeld reports whether some live Lab holds the lab's lock, and the pid
// its holder wrote into the lock file.
func lockHeld(prefix string) (held bool, pid int) {
	f, err := os.OpenFile(lockPath(prefix), os.O_RDWR, 0)
	if err != nil {
		return false, 0
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil || lk.Type == unix.F_UNLCK {
		return false, 0
	}
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, _ = strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	return true, pid
}

func inUseErr(prefix string) error {
	_, pid := lockHeld(prefix)
	who := "a live Lab"
	if pid > 0 {
		who = fmt.Sprintf("pid %d", pid)
		if pid == os.Getpid() {
			who += " (this process)"
		}
	}
	return fmt.Errorf("netem: %w: lab %q is held by %s (a running pslab?); stop it first", ErrInUse, prefix, who)
}
