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
// them again. Each file is replaced atomically; the superseded file is
// written first, so a kill in between leaves a record in both files, never
// in none.
func SetAsideUnfinished(dir string) error {
	path := filepath.Join(dir, RecordsFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var keep, aside bytes.Buffer
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		dst := &keep
		if !r.Finished() {
			dst = &aside
		}
		dst.Write(line) // as written: fields of other versions are kept
		dst.WriteByte('\n')
	}
	if aside.Len() == 0 {
		return nil
	}
	sup := filepath.Join(dir, SupersededFile)
	old, err := os.ReadFile(sup)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := WriteAtomic(sup, append(old, aside.Bytes()...)); err != nil {
		return err
	}
	return WriteAtomic(path, keep.Bytes())
}
