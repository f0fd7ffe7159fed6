package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"pslab/internal/results"
)

// InputError is a problem with a results file: missing, empty, or a line
// that is not a result record. Line is 0 when the problem is the whole file.
type InputError struct {
	File string
	Line int
	Msg  string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ReadRecords loads the records of every path: a run bundle directory (its
// records.jsonl) or a records file. Any problem is an *InputError naming the
// file and, for a bad line, the line; nothing is returned then.
func ReadRecords(paths ...string) ([]results.Record, error) {
	if len(paths) == 0 {
		return nil, errors.New("no results given: name a run bundle directory or a records.jsonl file")
	}
	var all []results.Record
	for _, p := range paths {
		recs, err := readFile(p)
		if err != nil {
			return nil, err
		}
		all = append(all, recs...)
	}
	return all, nil
}

func readFile(path string) ([]results.Record, error) {
	st, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, &InputError{File: path, Msg: "no such file or directory (want a run bundle directory or a records.jsonl file)"}
		}
		return nil, &InputError{File: path, Msg: err.Error()}
	}
	if st.IsDir() {
		path = filepath.Join(path, results.RecordsFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, &InputError{File: path, Msg: "no records file in this directory (is it a run bundle?)"}
		}
		return nil, &InputError{File: path, Msg: err.Error()}
	}
	var out []results.Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var r results.Record
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, &InputError{File: path, Line: line, Msg: "not a result record: " + err.Error()}
		}
		if msg := checkRecord(&r); msg != "" {
			return nil, &InputError{File: path, Line: line, Msg: msg}
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, &InputError{File: path, Line: line + 1, Msg: err.Error()}
	}
	if len(out) == 0 {
		return nil, &InputError{File: path, Msg: "no records in the file"}
	}
	return out, nil
}

// checkRecord rejects JSON lines that are not records this report can read.
func checkRecord(r *results.Record) string {
	switch {
	case r.Schema == 0:
		return "not a result record: no \"schema\" field"
	case r.Schema > results.SchemaVersion:
		return fmt.Sprintf("record schema %d is newer than this pslab understands (%d): use a newer pslab", r.Schema, results.SchemaVersion)
	case r.CaseID == "":
		return "record without a case id (\"case\")"
	case r.Broker == "":
		return "record without a broker"
	case r.Network.Profile == "":
		return "record without a network profile (\"network.profile\")"
	}
	return ""
}
