package load

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSeqTrackerCountsDistinctDuplicatesReordered(t *testing.T) {
	var tr seqTracker
	for _, s := range []uint64{1, 2, 3, 5, 4, 4, 1000, 6, 3} {
		tr.observe(s)
	}
	assert.Equal(t, int64(7), tr.distinct)   // 1 2 3 5 4 1000 6
	assert.Equal(t, int64(2), tr.duplicates) // 4, 3
	assert.Equal(t, int64(2), tr.reordered)  // 4 after 5, 6 after 1000
	assert.Equal(t, uint64(1000), tr.max)
}

func TestSeqTrackerLargeSequences(t *testing.T) {
	var tr seqTracker
	for s := uint64(1); s <= 100000; s++ {
		assert.True(t, tr.observe(s))
	}
	assert.False(t, tr.observe(99999))
	assert.Equal(t, int64(100000), tr.distinct)
	assert.Equal(t, int64(0), tr.reordered)
}
