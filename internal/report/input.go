package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

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

// maxInputErrors bounds the problems reported for one input: the rest are
// counted.
const maxInputErrors = 20

// ReadRecords loads the records of every path: a run bundle directory (its
// records.jsonl), a run directory (the output of a run over several
// scenario files: a bundle per suite in its subdirectories), or a records
// file. Any problem is an *InputError naming the file and, for a bad line,
// the line; every problem of every path is returned at once (errors.Join),
// and no records then.
func ReadRecords(paths ...string) ([]results.Record, error) {
	if len(paths) == 0 {
		return nil, errors.New("no results given: name a run bundle directory, a run directory or a records.jsonl file")
	}
	var all []results.Record
	var errs []error
	for _, p := range paths {
		files, err := RecordFiles(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			recs, err := readFile(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			all = append(all, recs...)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return all, nil
}

// RecordFiles resolves an input path to its records files: a records file
// itself, a bundle directory's records.jsonl, or the records.jsonl of each
// suite bundle of a run directory (one level down, in name order).
func RecordFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, &InputError{File: path, Msg: "no such file or directory (want a run bundle directory, a run directory or a records.jsonl file)"}
		}
		return nil, &InputError{File: path, Msg: err.Error()}
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	own := filepath.Join(path, results.RecordsFile)
	if _, err := os.Stat(own); err == nil {
		return []string{own}, nil
	}
	suites, _ := filepath.Glob(filepath.Join(path, "*", results.RecordsFile))
	if len(suites) == 0 {
		return nil, &InputError{File: own, Msg: "no records file in this directory, nor in a suite directory in it (is it a run bundle, or the --out of a run?)"}
	}
	sort.Strings(suites)
	return suites, nil
}

func readFile(path string) ([]results.Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, &InputError{File: path, Msg: "no such file"}
		}
		return nil, &InputError{File: path, Msg: err.Error()}
	}
	var out []results.Record
	var errs []error
	more := 0
	bad := func(line int, msg string) {
		if len(errs) < maxInputErrors {
			errs = append(errs, &InputError{File: path, Line: line, Msg: msg})
		} else {
			more++
		}
	}
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
			bad(line, "not a result record: "+err.Error())
			continue
		}
		if msg := checkRecord(&r); msg != "" {
			bad(line, msg)
			continue
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		bad(line+1, err.Error())
	}
	if more > 0 {
		errs = append(errs, &InputError{File: path, Msg: fmt.Sprintf("and %d more bad lines", more)})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
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
	if bad := impossibleNumbers(r); len(bad) > 0 {
		return "impossible values (a measurement is never negative or infinite): " + strings.Join(bad, ", ")
	}
	return ""
}

// impossibleNumbers lists the numbers the report aggregates that no
// measurement can give: negative, infinite or NaN throughputs, latencies,
// counts and wall time, as "json.name=value".
func impossibleNumbers(r *results.Record) []string {
	var bad []string
	see := func(name string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			bad = append(bad, fmt.Sprintf("%s=%g", name, v))
		}
	}
	see("wall_s", r.WallS)
	if res := r.Result; res != nil {
		see("result.pub_tput", res.PubTput)
		see("result.sub_tput", res.SubTput)
		numericFields("result.latency", reflect.ValueOf(res.Latency), see)
		numericFields("result.counts", reflect.ValueOf(res.Counts), see)
	}
	return bad
}

// numericFields calls see for every number field of a struct, by its JSON
// name.
func numericFields(prefix string, v reflect.Value, see func(string, float64)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64, reflect.Int32:
			see(prefix+"."+name, float64(f.Int()))
		case reflect.Float64, reflect.Float32:
			see(prefix+"."+name, f.Float())
		}
	}
}
