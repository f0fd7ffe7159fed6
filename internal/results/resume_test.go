package results

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/load"
)

func TestSetAsideUnfinishedKeepsFinishedRecordsOnce(t *testing.T) {
	dir := t.TempDir()
	b, err := Create(dir)
	require.NoError(t, err)
	ok := func(rep int) *Record { return &Record{CaseID: "01", Rep: rep, Result: &load.Result{SubTput: 1}} }
	failed := &Record{CaseID: "01", Rep: 2, Error: "purge: gone"}
	cut := ok(3)
	cut.Flags = []Flag{ParseFlag("interrupted: SIGINT during the window")}
	for _, r := range []*Record{ok(1), failed, cut, ok(4)} {
		require.NoError(t, b.Append(r))
	}
	fin, n, err := Unfinished(dir)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Len(t, fin, 2)

	require.NoError(t, SetAsideUnfinished(dir))
	kept, err := Read(dir)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 4}, []int{kept[0].Rep, kept[1].Rep})
	aside, err := Read(filepath.Join(dir, SupersededFile))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, []int{aside[0].Rep, aside[1].Rep})

	require.NoError(t, SetAsideUnfinished(dir), "nothing left to set aside")
	again, _ := Read(filepath.Join(dir, SupersededFile))
	assert.Len(t, again, 2)

	_, n, err = Unfinished(filepath.Join(dir, "none"))
	assert.NoError(t, err, "a bundle without records yet")
	assert.Zero(t, n)
	_, err = os.Stat(filepath.Join(dir, "none"))
	assert.True(t, os.IsNotExist(err))
}
