package load

// seqTracker counts one publisher's sequence numbers as seen by one
// subscriber: distinct, duplicated and reordered deliveries. Sequences are
// 1-based; the bitmap grows as needed.
type seqTracker struct {
	seen       []uint64
	max        uint64
	distinct   int64
	duplicates int64
	reordered  int64
}

// observe records seq and reports whether it was new.
func (t *seqTracker) observe(seq uint64) bool {
	word, bit := seq/64, seq%64
	if word >= uint64(len(t.seen)) {
		n := max(2*len(t.seen), int(word)+1, 64)
		grown := make([]uint64, n)
		copy(grown, t.seen)
		t.seen = grown
	}
	if t.seen[word]&(1<<bit) != 0 {
		t.duplicates++
		return false
	}
	t.seen[word] |= 1 << bit
	t.distinct++
	if seq < t.max {
		t.reordered++
	} else {
		t.max = seq
	}
	return true
}
