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
type Bundle struct {
	Dir string
	mu  sync.Mutex
}

// Create returns the bundle at dir. The directory is made when the first
// record or histogram is written, so a run that fails before measuring
// anything leaves nothing behind.
func Create(dir string) (*Bundle, error) {
	if dir == "" {
		return nil, fmt.Errorf("no output directory")
	}
	return &Bundle{Dir: dir}, nil
}

// Append adds one record. The whole records file is rewritten to a temp
// file and renamed over the old one, so a kill at any point leaves either
// the old or the new file, never a half line.
func (b *Bundle) Append(r *Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(b.Dir, RecordsFile)
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return WriteAtomic(path, append(append(old, line...), '\n'))
}

// WriteHistogram stores an encoded histogram under hist/ atomically and
// returns its path relative to the bundle.
func (b *Bundle) WriteHistogram(name, encoded string) (string, error) {
	rel := filepath.Join("hist", name+".hdr")
	if err := os.MkdirAll(filepath.Join(b.Dir, "hist"), 0o755); err != nil {
		return "", err
	}
	return rel, WriteAtomic(filepath.Join(b.Dir, rel), []byte(encoded+"\n"))
}

// WriteAtomic writes data to path via a temp file in the same directory,
// fsync and rename. It never replaces what is not a regular file (a
// device such as /dev/null, a pipe, a directory): that is an error.
func WriteAtomic(path string, data []byte) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s): not replaced", path, st.Mode().Type())
	}
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
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp) // e.g. path is a directory: leave nothing beside it
		return err
	}
	return nil
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
