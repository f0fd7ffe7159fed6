package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/record"
)

// bundleWith writes records (with histograms) for broker x network x case
// x rep, and one line of an older pslab's records with a field this one
// does not know, which must move as written.
func bundleWith(t *testing.T) string {
	dir := t.TempDir()
	b, err := Create(dir)
	require.NoError(t, err)
	for _, c := range []struct {
		broker, net, id string
		reps            int
	}{{"nats", "wireline", "15", 2}, {"nats", "wireline", "16", 1}, {"nats", "wifi-paper", "15", 1}, {"artemis", "wireline", "15", 1}} {
		for rep := 1; rep <= c.reps; rep++ {
			h, err := b.WriteHistogram(c.broker+"-"+c.net+"-"+c.id+"-"+string(rune('0'+rep)), "HISTFAKE")
			require.NoError(t, err)
			require.NoError(t, b.Append(&Record{Broker: c.broker, Network: Network{Profile: c.net}, CaseID: c.id, Rep: rep,
				Result: &record.Result{SubTput: 1}, HistFile: h}))
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, RecordsFile), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"schema":1,"case":"16","rep":2,"broker":"nats","network":{"profile":"wireline"},"from_the_future":true}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return dir
}

func TestSetAsideMovesWholeRowsAsWritten(t *testing.T) {
	dir := bundleWith(t)
	before, err := os.ReadFile(filepath.Join(dir, RecordsFile))
	require.NoError(t, err)
	res, err := SetAside(dir, Rows{Broker: "nats", Network: "wireline", Cases: []string{"15", "16"}}, "old")
	require.NoError(t, err)
	assert.Equal(t, 4, res.Records, "both reps of 15, both of 16 (one of another pslab)")
	assert.Equal(t, 2, res.Kept)
	assert.Equal(t, []string{"15", "16"}, res.Cases)
	assert.Equal(t, 3, res.Histograms)

	kept, err := os.ReadFile(filepath.Join(dir, RecordsFile))
	require.NoError(t, err)
	aside, err := os.ReadFile(filepath.Join(dir, SupersededFile))
	require.NoError(t, err)
	assert.Contains(t, string(aside), `"from_the_future":true`, "moved as written")
	// Every line is in exactly one of the two files, unchanged.
	all := append(bytes.Split(bytes.TrimSpace(kept), []byte("\n")), bytes.Split(bytes.TrimSpace(aside), []byte("\n"))...)
	assert.ElementsMatch(t, bytes.Split(bytes.TrimSpace(before), []byte("\n")), all)
	for _, r := range must(Read(dir)) {
		assert.False(t, r.Broker == "nats" && r.Network.Profile == "wireline", "left: %+v", r)
	}
	moved, err := filepath.Glob(filepath.Join(res.HistDir, "*.hdr"))
	require.NoError(t, err)
	assert.Len(t, moved, 3)

	// Nothing left to move: refused, nothing changed.
	_, err = SetAside(dir, Rows{Broker: "nats", Network: "wireline", Cases: []string{"15"}}, "again")
	assert.ErrorContains(t, err, "case 15: no record on nats over wireline")
	after, _ := os.ReadFile(filepath.Join(dir, RecordsFile))
	assert.Equal(t, kept, after)
}

func TestSetAsideRefusesChangingNothing(t *testing.T) {
	dir := bundleWith(t)
	before, _ := os.ReadFile(filepath.Join(dir, RecordsFile))
	_, err := SetAside(dir, Rows{Broker: "nats", Network: "wireline", Cases: []string{"15", "99"}}, "x")
	assert.ErrorContains(t, err, "case 99: no record")
	// A histogram already in the tag's folder.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "hist-superseded", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hist-superseded", "x", "nats-wireline-15-1.hdr"), nil, 0o644))
	_, err = SetAside(dir, Rows{Broker: "nats", Network: "wireline", Cases: []string{"15"}}, "x")
	assert.ErrorContains(t, err, "exists: choose another tag")
	_, err = SetAside(dir, Rows{Broker: "nats", Network: "wireline", Cases: []string{"15"}}, "../x")
	assert.ErrorContains(t, err, "want a folder name")
	after, _ := os.ReadFile(filepath.Join(dir, RecordsFile))
	assert.Equal(t, before, after)
	assert.NoFileExists(t, filepath.Join(dir, SupersededFile))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestWallTimesSumPhases(t *testing.T) {
	recs := []Record{
		{Broker: "nats", Network: Network{Profile: "wireline"}, WallS: 10, Settings: Settings{WarmupS: 2, WindowS: 5},
			Phases: &Phases{IdleWaitS: 0.5, PurgeS: 0.5, PurgeAfterS: 1}, Result: &record.Result{Connect: 1, CloseS: 0.5}},
		{Broker: "nats", Network: Network{Profile: "wireline"}, WallS: 8, Settings: Settings{WarmupS: 2, WindowS: 5}},
		{Broker: "artemis", Network: Network{Profile: "wireline"}, WallS: 1},
	}
	ws := WallTimes(recs)
	require.Len(t, ws, 2)
	assert.Equal(t, "artemis", ws[0].Broker)
	n := ws[1]
	assert.Equal(t, 2, n.Runs)
	assert.Equal(t, 18.0, n.Wall)
	assert.Equal(t, 14.0, n.Window)
	assert.InDelta(t, 18-0.5-0.5-1-14-0.5, n.Rest(), 1e-9)
	var b strings.Builder
	WriteWallTimes(&b, ws, 30)
	assert.Contains(t, b.String(), "case runs (with the purge after each): 20 s of 30 s wall")
	assert.Contains(t, b.String(), "| nats | wireline | 2 | 18 | 9.0 |")
}

func TestPartsLogSaysWhichPartRanAndHowItEnded(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, PartsFile), []byte("part: start 2026-01-01T00:00:00Z, 5 s, exit 0, old"), 0o644))
	p, err := BeginPart(dir, "pslab x, host, command: pslab run")
	require.NoError(t, err)
	line, finished, n, err := LastPart(dir)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.False(t, finished, "a part still running (or killed) has not finished")
	assert.Contains(t, line, "running (no end recorded), pslab x")
	require.NoError(t, p.End(130))
	line, finished, _, _ = LastPart(dir)
	assert.False(t, finished)
	assert.Regexp(t, `^part: start \S+Z, \d+ s, exit 130, pslab x, host, command: pslab run$`, line)
	p, err = BeginPart(dir, "again")
	require.NoError(t, err)
	require.NoError(t, p.End(0))
	_, finished, n, _ = LastPart(dir)
	assert.True(t, finished)
	assert.Equal(t, 3, n)
	data, _ := os.ReadFile(filepath.Join(dir, PartsFile))
	assert.Equal(t, 3, strings.Count(string(data), "\n"), "one line per part, the first one's missing newline added")
	_, _, n, err = LastPart(t.TempDir())
	assert.NoError(t, err)
	assert.Zero(t, n, "no parts.log")
}
