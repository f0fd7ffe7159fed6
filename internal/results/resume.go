package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// SupersededFile holds the records a resumed run replaced: failed or
// interrupted repetitions, which it runs again.
const SupersededFile = "records.superseded.jsonl"

// Finished reports whether a record is a finished repetition: measured,
// not failed, and not cut short by an interruption (flag "interrupted").
// A resumed run runs the others again.
func (r *Record) Finished() bool {
	if r.Error != "" || r.Result == nil {
		return false
	}
	_, interrupted := Flagged(r.Flags, FlagInterrupted)
	return !interrupted
}

// Unfinished counts the records of bundle dir that are not finished (0
// when the bundle has no records yet).
func Unfinished(dir string) (finished []Record, unfinished int, err error) {
	recs, err := Read(dir)
	if os.IsNotExist(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	for _, r := range recs {
		if r.Finished() {
			finished = append(finished, r)
		} else {
			unfinished++
		}
	}
	return finished, unfinished, nil
}

// SetAsideUnfinished moves the unfinished records of bundle dir from
// records.jsonl to records.superseded.jsonl (appended), so that
// records.jsonl holds each repetition once after the resumed run has run
// them again.
func SetAsideUnfinished(dir string) error {
	_, err := setAside(dir, func(r *Record) bool { return !r.Finished() })
	return err
}

// SetAside moves the records of the bundle for which aside holds to
// records.superseded.jsonl (appended), under the bundle's lock, and
// returns how many it moved: a resumed run sets aside the records of
// another pslab build or broker configuration, whose rows start over.
func (b *Bundle) SetAside(aside func(*Record) bool) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return setAside(b.Dir, aside)
}

// setAside moves the records of bundle dir for which aside holds from
// records.jsonl to records.superseded.jsonl (appended). Each file is
// replaced atomically; the superseded file is written first, so a kill in
// between leaves a record in both files, never in none. Lines are moved
// as written: fields of other versions are kept.
func setAside(dir string, aside func(*Record) bool) (int, error) {
	path := filepath.Join(dir, RecordsFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var keep, moved bytes.Buffer
	n := 0
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return 0, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		dst := &keep
		if aside(&r) {
			dst = &moved
			n++
		}
		dst.Write(line)
		dst.WriteByte('\n')
	}
	if n == 0 {
		return 0, nil
	}
	sup := filepath.Join(dir, SupersededFile)
	old, err := os.ReadFile(sup)
	if err != nil && !os.IsNotExist(err) {
		return 0, err
	}
	if err := WriteAtomic(sup, append(old, moved.Bytes()...)); err != nil {
		return 0, err
	}
	return n, WriteAtomic(path, keep.Bytes())
}
