package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Rows names case rows of a bundle: the cases (ids) of a broker over a
// network.
type Rows struct {
	Broker, Network string
	Cases           []string
}

func (r Rows) has(rec *Record) bool {
	return rec.Broker == r.Broker && rec.Network.Profile == r.Network && slices.Contains(r.Cases, rec.CaseID)
}

// SetAsideResult says what SetAside moved.
type SetAsideResult struct {
	Records    int      // moved to records.superseded.jsonl
	Kept       int      // left in records.jsonl
	Cases      []string // the cases moved, sorted
	Histograms int      // moved to HistDir
	HistDir    string
}

// SetAside moves every record of rows from the bundle's records.jsonl to
// records.superseded.jsonl (appended, as written) and their histograms
// from hist/ to hist-superseded/TAG/, so that a resumed run (pslab run
// --resume) runs those rows again from their first repetition. Whole rows
// are set aside, never single records, so that the choice cannot depend
// on a repetition's outcome. It refuses, changing nothing, when a case
// matches no record or TAG's folder already holds one of the histograms.
// The superseded file is written before records.jsonl (each atomically),
// so a kill in between leaves a record in both files, never in none; a
// second call finds nothing left to move.
func SetAside(dir string, rows Rows, tag string) (SetAsideResult, error) {
	res := SetAsideResult{HistDir: filepath.Join(dir, "hist-superseded", tag)}
	if tag == "" || strings.ContainsAny(tag, `/\`) || tag == "." || tag == ".." {
		return res, fmt.Errorf("set aside: tag %q: want a folder name", tag)
	}
	var hists []string
	found := map[string]bool{}
	split, err := splitRecords(dir, func(r *Record) bool {
		if !rows.has(r) {
			return false
		}
		found[r.CaseID] = true
		if r.HistFile != "" {
			hists = append(hists, r.HistFile)
		}
		return true
	})
	if err != nil {
		return res, err
	}
	var problems []string
	for _, c := range rows.Cases {
		if !found[c] {
			problems = append(problems, fmt.Sprintf("case %s: no record on %s over %s in %s", c, rows.Broker, rows.Network, filepath.Join(dir, RecordsFile)))
		}
	}
	for _, h := range hists {
		if p := filepath.Join(res.HistDir, filepath.Base(h)); exists(p) {
			problems = append(problems, p+" exists: choose another tag")
		}
	}
	if len(problems) > 0 {
		return res, fmt.Errorf("set aside: nothing changed:\n  %s", strings.Join(problems, "\n  "))
	}
	if err := split.supersede(); err != nil {
		return res, err
	}
	if err := os.MkdirAll(res.HistDir, 0o755); err != nil {
		return res, err
	}
	for _, h := range hists {
		src := filepath.Join(dir, h)
		if !exists(src) {
			continue
		}
		if err := os.Rename(src, filepath.Join(res.HistDir, filepath.Base(h))); err != nil {
			return res, err
		}
		res.Histograms++
	}
	res.Records, res.Kept = split.aside, split.kept
	for c := range found {
		res.Cases = append(res.Cases, c)
	}
	sort.Strings(res.Cases)
	return res, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// recordSplit is a bundle's records.jsonl split in two, each line as it
// was written (fields of other pslab versions are kept).
type recordSplit struct {
	dir         string
	keep, moved bytes.Buffer
	kept, aside int
}

// splitRecords reads the bundle's records and puts those aside picks in
// the moved part.
func splitRecords(dir string, aside func(*Record) bool) (*recordSplit, error) {
	s := &recordSplit{dir: dir}
	path := filepath.Join(dir, RecordsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		dst := &s.keep
		if aside(&r) {
			dst = &s.moved
			s.aside++
		} else {
			s.kept++
		}
		dst.Write(line)
		dst.WriteByte('\n')
	}
	return s, nil
}

// supersede appends the moved records to records.superseded.jsonl, then
// replaces records.jsonl by the kept ones (nothing when none moved).
func (s *recordSplit) supersede() error {
	if s.aside == 0 {
		return nil
	}
	sup := filepath.Join(s.dir, SupersededFile)
	old, err := os.ReadFile(sup)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	if err := WriteAtomic(sup, append(old, s.moved.Bytes()...)); err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(s.dir, RecordsFile), s.keep.Bytes())
}
