package results

import (
	"os"
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
	split, err := splitRecords(dir, func(r *Record) bool { return !r.Finished() })
	if err != nil {
		return err
	}
	return split.supersede()
}

// SetAside moves the records of the bundle for which aside holds to
// records.superseded.jsonl (appended, as written), under the bundle's
// lock, and returns how many it moved: a resumed run sets aside the
// records of another pslab build or broker configuration, whose rows
// start over.
func (b *Bundle) SetAside(aside func(*Record) bool) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	split, err := splitRecords(b.Dir, aside)
	if err != nil {
		return 0, err
	}
	return split.aside, split.supersede()
}
