package netem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// acquireLock takes the lab's lock and returns the file holding it. The
// holder removes the file when it lets go (releaseLock), so a lock taken on
// a file that was removed meanwhile is no lock: it tries again on the new
// file.
func acquireLock(prefix string) (*os.File, error) {
	for {
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
		if !sameFile(f, lockPath(prefix)) {
			f.Close() // removed by its last holder: lock the new one
			continue
		}
		return stampLock(f), nil
	}
}

// sameFile reports whether path still names the file f has open.
func sameFile(f *os.File, path string) bool {
	open, err1 := f.Stat()
	named, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(open, named)
}

// releaseLock removes the lock file and lets go of the lock, in that order:
// whoever opened the file meanwhile notices it is gone (acquireLock).
func releaseLock(prefix string, f *os.File) {
	if sameFile(f, lockPath(prefix)) {
		_ = os.Remove(lockPath(prefix))
	}
	f.Close()
}

// RemoveStaleLock removes the lab's lock file when no live lab holds it (a
// killed run's, or one from before locks were removed on Down). It reports
// whether it removed one; a held lock is left alone.
func RemoveStaleLock(prefix string) (bool, error) {
	if _, err := os.Stat(lockPath(prefix)); os.IsNotExist(err) {
		return false, nil
	}
	f, err := acquireLock(prefix)
	if err != nil {
		return false, err
	}
	releaseLock(prefix, f)
	return true, nil
}

// StaleLockNames lists the lab names with a lock file in /run that no live
// lab holds.
func StaleLockNames() []string {
	files, _ := filepath.Glob("/run/pslab-*.lock")
	var names []string
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "pslab-"), ".lock")
		if held, _ := lockHeld(name); !held {
			names = append(names, name)
		}
	}
	return names
}

// stampLock writes the holder's pid into the lock file.
func stampLock(f *os.File) *os.File {
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f
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

// LabHeld reports whether a live Lab (of any process) holds the lab named
// prefix, and the pid its holder wrote.
func LabHeld(prefix string) (bool, int) { return lockHeld(prefix) }
