package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

var (
	tableRecords  = filepath.Join("..", "..", "internal", "report", "testdata", "table.jsonl")
	claimsRecords = filepath.Join("..", "..", "internal", "report", "claims", "testdata", "claims.jsonl")
)

// noTempFiles fails when a temp file of an atomic write is left in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	assert.Empty(t, left, "temp files left in %s", dir)
}

// An output path that is an existing directory is bad input, and leaves
// no temp file beside it (it was exit 1 and a .X.tmp-* file).
func TestReportAndCompareOutIntoADirectory(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "existing")
	require.NoError(t, os.Mkdir(target, 0o755))
	assert.Equal(t, exitBadInput, executeFresh("report", tableRecords, "--format", "md", "-o", target))
	noTempFiles(t, dir)
	assert.Equal(t, exitBadInput, executeFresh("compare", claimsRecords, claimsRecords, "--format", "md", "--margin", "10%", "--plot", "", "-o", target))
	noTempFiles(t, dir)
	entries, err := os.ReadDir(target)
	require.NoError(t, err)
	assert.Empty(t, entries, "the directory is left as it was")
}

// compare checks every output before it writes any: a --plot directory
// that cannot be made fails before the markdown is written (it wrote the
// markdown, then failed).
func TestCompareChecksEveryOutputFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	md := filepath.Join(dir, "cmp.md")
	code := executeFresh("compare", claimsRecords, claimsRecords, "--format", "md", "--margin", "10%", "-o", md, "--plot", filepath.Join(file, "plots"))
	assert.Equal(t, exitBadInput, code)
	_, err := os.Stat(md)
	assert.True(t, os.IsNotExist(err), "nothing written when an output is bad")
	noTempFiles(t, dir)
}

// plot --out naming a file is bad input, before anything is drawn.
func TestPlotOutIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	assert.Equal(t, exitBadInput, executeFresh("plot", tableRecords, "--figure", "latency", "--dpi", "96", "--out", file))
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))
}

// Records with numbers no measurement gives (negative throughput) are bad
// input, named by file:line; every bad line is reported.
func TestReportRefusesImpossibleNumbers(t *testing.T) {
	data, err := os.ReadFile(tableRecords)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Contains(t, lines[0], `"sub_tput":`)
	lines[0] = strings.Replace(lines[0], `"sub_tput":`, `"sub_tput":-5e3,"x_sub_tput":`, 1)
	lines[2] = strings.Replace(lines[2], `"pub_tput":`, `"pub_tput":-1,"x_pub_tput":`, 1)
	dir := t.TempDir()
	in := filepath.Join(dir, "records.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	out := filepath.Join(dir, "REPORT.md")
	stderr := captureStderr(t, func() {
		assert.Equal(t, exitBadInput, executeFresh("report", in, "--format", "md", "-o", out))
	})
	assert.Contains(t, stderr, in+":1: impossible values")
	assert.Contains(t, stderr, "result.sub_tput=-5000")
	assert.Contains(t, stderr, in+":3: impossible values")
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err))
}

// captureStderr returns what f wrote to the process's standard error.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stderr = old }()
	f()
	w.Close()
	os.Stderr = old
	return <-done
}

// report, compare and plot take the --out of a run over two scenario files
// (a bundle per suite): the committed quick reproduction.
func TestRunDirectoryAsInput(t *testing.T) {
	run := filepath.Join("..", "..", "results", "gaddah-kunz-quick")
	dir := t.TempDir()
	md := filepath.Join(dir, "REPORT.md")
	require.Equal(t, exitOK, executeFresh("report", run, "--format", "md", "-o", md))
	b, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(b), "## Suite gaddah-kunz-set1")
	assert.Contains(t, string(b), "## Suite gaddah-kunz-set2")
	cmp := filepath.Join(dir, "cmp.md")
	require.Equal(t, exitOK, executeFresh("compare", run, run, "--format", "md", "--margin", "10%", "--plot", "", "-o", cmp))
	require.Equal(t, exitOK, executeFresh("plot", run, "--figure", "13", "--dpi", "96", "--out", filepath.Join(dir, "plots")))
	figs, _ := filepath.Glob(filepath.Join(dir, "plots", "fig13-gaddah-kunz-set2-*.svg"))
	assert.NotEmpty(t, figs)
}

// executeFresh runs a command line on fresh report, compare, plot, run
// and sweep commands (cobra keeps flag values between calls in one
// process, and slice flags append).
func executeFresh(args ...string) int {
	for _, mk := range []func() *cobra.Command{newReportCmd, newCompareCmd, newPlotCmd, newRunCmd, newSweepCmd, newCapacityCmd} {
		fresh := mk()
		for _, c := range rootCmd.Commands() {
			if c.Name() == fresh.Name() {
				rootCmd.RemoveCommand(c)
			}
		}
		rootCmd.AddCommand(fresh)
	}
	return execute(args)
}

// -o naming a pipe (or a device such as /dev/null or /dev/stdout) writes
// into it and leaves it what it was: it is never replaced by a file.
func TestReportIntoAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo) // opens for reading: the writer's open returns
		got <- string(b)
	}()
	assert.Equal(t, exitOK, executeFresh("report", tableRecords, "--format", "csv", "-o", fifo))
	assert.Contains(t, <-got, "suite,case,name")
	st, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, st.Mode().Type(), "still a pipe")
}
