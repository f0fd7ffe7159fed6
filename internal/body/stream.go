package body

// A stream payload (StreamMessage) is a sequence of tagged values with no
// count, read in order until the end like a JMS StreamMessage: seq (int64),
// publisher (int64), sel (int32), sent (int64), generated values 0, 1, ...
// (a function of seq and position), and a final bytes pad that makes the
// body exactly the requested size.

const streamMinPayload = 9 + 9 + 5 + 9 + padMin

type streamEncoder struct {
	size int
	pat  string
}

func newStreamEncoder(size int) *streamEncoder {
	return &streamEncoder{size: size, pat: padPattern(size)}
}

// Encode writes the elements for s one by one.
func (e *streamEncoder) Encode(dst []byte, s Stamp) []byte {
	b := begin(dst, e.size, codeStream, s)
	b = appendInt64Value(b, int64(s.Seq))
	b = appendInt64Value(b, int64(s.Publisher))
	b = appendInt32Value(b, int32(s.Sel))
	b = appendInt64Value(b, s.SentNanos)
	for i := 0; i < maxGen && e.size-len(b) >= maxGenSize+padMin; i++ {
		b = appendGen(b, genAt(s.Seq, i))
	}
	b = appendPadValue(b, e.pat, s.Seq, e.size-len(b)-padMin)
	seal(b)
	return b
}

// decodeStream reads every element in order and checks it.
func decodeStream(p []byte, s Stamp) error {
	want := []struct {
		tag byte
		num uint64
	}{
		{tagInt64, s.Seq},
		{tagInt64, uint64(s.Publisher)},
		{tagInt32, uint64(uint32(int32(s.Sel)))},
		{tagInt64, uint64(s.SentNanos)},
	}
	off := 0
	for k, w := range want {
		v, next, err := readTagged(p, off)
		if err != nil {
			return err
		}
		if v.tag != w.tag || v.num != w.num {
			return corrupt("stream element %d does not match the stamp", k)
		}
		off = next
	}
	for i := 0; ; i++ {
		v, next, err := readTagged(p, off)
		if err != nil {
			return err
		}
		off = next
		if off == len(p) { // the last element is the pad
			if v.tag != tagBytes || !checkPad(v.raw, s.Seq) {
				return corrupt("stream pad element wrong")
			}
			return nil
		}
		if i >= maxGen || !v.matches(genAt(s.Seq, i)) {
			return corrupt("stream element %d wrong", mapCore+i)
		}
	}
}
