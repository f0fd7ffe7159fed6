package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// RecordsFile is the name of the JSON-lines file in a bundle.
const RecordsFile = "records.jsonl"

// Bundle is a run's output directory: records.jsonl plus raw histograms.
// It holds each (suite, case, broker, network, repetition) once: a record
// with a key the bundle already holds is refused, never written. Its
// directory is locked (LockDir) from the first write until Close, unless
// this process already holds it or a directory around it.
type Bundle struct {
	Dir  string
	mu   sync.Mutex
	keys map[recordKey]bool // the keys in records.jsonl when it had size
	size int64              // -1: keys not read yet
	lock *DirLock
}

// recordKey names one repetition of one case on one broker and network.
type recordKey struct {
	Suite   string `json:"suite"`
	Case    string `json:"case"`
	Broker  string `json:"broker"`
	Network struct {
		Profile string `json:"profile"`
	} `json:"network"`
	Rep int `json:"rep"`
}

func keyOf(r *Record) recordKey {
	k := recordKey{Suite: r.Suite, Case: r.CaseID, Broker: r.Broker, Rep: r.Rep}
	k.Network.Profile = r.Network.Profile
	return k
}

func (k recordKey) String() string {
	return fmt.Sprintf("suite %s case %s on %s over %s rep %d", k.Suite, k.Case, k.Broker, k.Network.Profile, k.Rep)
}

// Create returns the bundle at dir. The directory is made when the first
// record or histogram is written, so a run that fails before measuring
// anything leaves nothing behind.
func Create(dir string) (*Bundle, error) {
	if dir == "" {
		return nil, fmt.Errorf("no output directory")
	}
	return &Bundle{Dir: dir, size: -1}, nil
}

// Close lets go of the directory's lock, if the bundle took it.
func (b *Bundle) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lock.Release()
	b.lock = nil
}

// CheckNew refuses a record whose key the bundle already holds; a caller
// that writes files named by the key (the histogram) checks first.
func (b *Bundle) CheckNew(r *Record) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.checkNewLocked(r)
	return err
}

// checkNewLocked reads the keys again when records.jsonl changed size
// since they were read (another Bundle of this process, or a resume's
// set-aside, rewrote it), and refuses r's key if present. It returns the
// file's contents.
func (b *Bundle) checkNewLocked(r *Record) ([]byte, error) {
	path := filepath.Join(b.Dir, RecordsFile)
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if int64(len(old)) != b.size {
		b.keys = map[recordKey]bool{}
		for i, line := range bytes.Split(old, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var k recordKey
			if err := json.Unmarshal(line, &k); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
			}
			b.keys[k] = true
		}
		b.size = int64(len(old))
	}
	if k := keyOf(r); b.keys[k] {
		return nil, fmt.Errorf("%s already holds a record of %s: a second one is not written (two runs into one directory?)", path, k)
	}
	return old, nil
}

// Append adds one record, unless the bundle holds its key already. The
// whole records file is rewritten to a temp file and renamed over the old
// one, so a kill at any point leaves either the old or the new file, never
// a half line.
func (b *Bundle) Append(r *Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.lockLocked(); err != nil {
		return err
	}
	old, err := b.checkNewLocked(r)
	if err != nil {
		return err
	}
	data := append(append(old, line...), '\n')
	if err := WriteAtomic(filepath.Join(b.Dir, RecordsFile), data); err != nil {
		return err
	}
	b.keys[keyOf(r)], b.size = true, int64(len(data))
	return nil
}

// lockLocked makes the directory and takes its lock, once.
func (b *Bundle) lockLocked() error {
	if b.lock != nil {
		return nil
	}
	l, err := LockDir(b.Dir)
	if err != nil {
		return err
	}
	b.lock = l
	return nil
}

// WriteHistogram stores an encoded histogram under hist/ atomically and
// returns its path relative to the bundle.
func (b *Bundle) WriteHistogram(name, encoded string) (string, error) {
	rel := filepath.Join("hist", name+".hdr")
	b.mu.Lock()
	err := b.lockLocked()
	b.mu.Unlock()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(b.Dir, "hist"), 0o755); err != nil {
		return "", err
	}
	return rel, WriteAtomic(filepath.Join(b.Dir, rel), []byte(encoded+"\n"))
}

// WriteAtomic writes data to path via a temp file in the same directory,
// fsync and rename.
func WriteAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// Read loads every record of a records file, or of a bundle directory.
func Read(path string) ([]Record, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, RecordsFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
