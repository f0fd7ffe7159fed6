package body

import (
	"testing"

	"pslab/internal/scenario"
)

// decodeUnchecked decodes the payload without the CRC check, so the fuzzer
// reaches the structural decoders with hostile payloads.
func decodeUnchecked(b []byte) error {
	s, t, err := PeekStamp(b)
	if err != nil {
		return err
	}
	p := b[StampSize:]
	switch t {
	case scenario.BodyText:
		return decodeText(p, s)
	case scenario.BodyMap:
		return decodeMap(p, s)
	case scenario.BodyStream:
		return decodeStream(p, s)
	case scenario.BodyObject:
		return decodeObject(p, s)
	}
	return nil
}

func FuzzDecode(f *testing.F) {
	for _, bt := range scenario.BodyTypes {
		for _, size := range []int{MinSize(bt), MinSize(bt) + 37, 700} {
			enc, err := NewEncoder(bt, size, 9)
			if err != nil {
				f.Fatal(err)
			}
			b := enc.Encode(nil, Stamp{Publisher: 2, Seq: 77, SentNanos: 1e9, Sel: 40})
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	f.Add([]byte{})
	f.Add([]byte("ps\x01\x03"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, bt, err := Decode(b)
		if err == nil {
			// Whatever decodes must re-encode to the same stamp.
			if ps, pt, perr := PeekStamp(b); perr != nil || ps != s || pt != bt {
				t.Fatalf("Decode ok but PeekStamp = %+v %s %v", ps, pt, perr)
			}
		}
		if len(b) >= StampSize {
			c := append([]byte(nil), b...)
			_ = decodeUnchecked(c)
			seal(c)
			_, _, _ = Decode(c)
		}
	})
}
