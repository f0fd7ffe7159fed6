package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// LockFile, in an output directory, is held with flock(2) by the one pslab
// process writing into that directory (a run, a resumed run, a sweep, a
// model measurement) for its whole life; it holds that process's pid. The
// kernel lets go of the lock when the process ends, however it ends, so a
// killed run's directory is free at once. The holder removes the file
// when it lets go (mode 0644: anyone may read whose it is).
const LockFile = ".pslab.lock"

// LockedError says an output directory is held by another live writer.
type LockedError struct {
	Dir string
	PID int // the holder's pid as it wrote it (0: not written yet)
}

func (e *LockedError) Error() string {
	who := "another pslab process"
	if e.PID > 0 {
		who = fmt.Sprintf("pslab pid %d", e.PID)
	}
	return fmt.Sprintf("%s is being written by %s (it holds %s): two writers would mix their records; wait for it to end, or write elsewhere",
		e.Dir, who, filepath.Join(e.Dir, LockFile))
}

// DirLock is a held output directory (Release lets go of it).
type DirLock struct {
	path    string   // absolute directory
	f       *os.File // nil: covered by a lock this process already holds
	created bool     // LockDir made the directory: Release removes it if it stayed empty
}

var (
	heldMu sync.Mutex
	held   = map[string]*DirLock{} // absolute directory -> its lock
)

// LockDir makes dir (mode 0755) and takes its lock, or returns a
// *LockedError naming the live process that holds it. A directory it made
// goes again with Release if nothing was written into it. A directory inside
// one this process holds is covered by that lock: LockDir returns a lock
// whose Release does nothing.
func LockDir(dir string) (*DirLock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	heldMu.Lock()
	defer heldMu.Unlock()
	for p := abs; ; p = filepath.Dir(p) {
		if _, ok := held[p]; ok {
			return &DirLock{path: abs}, nil
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	_, statErr := os.Stat(abs)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(abs, LockFile)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, &LockedError{Dir: dir, PID: lockPID(path)}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !sameFile(f, path) {
			f.Close() // its holder removed it as it let go: lock the new one
			continue
		}
		_ = os.Chmod(path, 0o644) // whatever the umask made of it
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		l := &DirLock{path: abs, f: f, created: os.IsNotExist(statErr)}
		held[abs] = l
		return l, nil
	}
}

// Release lets go of the lock: the file is removed first, so that whoever
// opened it meanwhile notices (LockDir) and locks a new one.
func (l *DirLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	heldMu.Lock()
	defer heldMu.Unlock()
	path := filepath.Join(l.path, LockFile)
	if sameFile(l.f, path) {
		_ = os.Remove(path)
	}
	l.f.Close()
	l.f = nil
	delete(held, l.path)
	if l.created {
		_ = os.Remove(l.path) // only if empty: a run that wrote nothing leaves nothing
	}
}

// DirHolder reports whether a live process holds dir's lock, and its pid.
func DirHolder(dir string) (bool, int) {
	path := filepath.Join(dir, LockFile)
	f, err := os.Open(path)
	if err != nil {
		return false, 0
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return false, 0
	}
	return true, lockPID(path)
}

func lockPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// sameFile reports whether path still names the file f has open.
func sameFile(f *os.File, path string) bool {
	open, err1 := f.Stat()
	named, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(open, named)
}
