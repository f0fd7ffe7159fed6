package body

import "encoding/binary"

// A map payload (MapMessage) is a uint16 entry count and then the entries,
// each a 1-byte name length, the name, and a tagged value (values.go). The
// entries are "seq", "pub", "sel", "sent" (from the stamp), generated entries
// "s0", "i1", "l2", "d3", "b4", "y5", "s6", ... (kind letter and index; value
// a function of seq and index), and a final "pad" bytes entry sized so the
// body is exactly the requested size.

const (
	mapCore       = 4 // seq, pub, sel, sent
	mapPadEntry   = 1 + len("pad") + padMin
	mapMinPayload = 2 + (1 + 3 + 9) + (1 + 3 + 9) + (1 + 3 + 5) + (1 + 4 + 9) + mapPadEntry
	mapMaxName    = 5 // kind letter + up to 4 digits (maxGen = 4096)
)

type mapEncoder struct {
	size int
	pat  string
}

func newMapEncoder(size int) *mapEncoder {
	return &mapEncoder{size: size, pat: padPattern(size)}
}

func appendName(b []byte, name string) []byte {
	b = append(b, byte(len(name)))
	return append(b, name...)
}

// Encode builds the entries for s one by one and writes them.
func (e *mapEncoder) Encode(dst []byte, s Stamp) []byte {
	b := begin(dst, e.size, codeMap, s)
	countAt := len(b)
	b = append(b, 0, 0)
	b = appendName(b, "seq")
	b = appendInt64Value(b, int64(s.Seq))
	b = appendName(b, "pub")
	b = appendInt64Value(b, int64(s.Publisher))
	b = appendName(b, "sel")
	b = appendInt32Value(b, int32(s.Sel))
	b = appendName(b, "sent")
	b = appendInt64Value(b, s.SentNanos)
	n := mapCore
	for i := 0; i < maxGen && e.size-len(b) >= 1+mapMaxName+maxGenSize+mapPadEntry; i++ {
		at := len(b)
		b = append(b, 0)
		b = appendGenName(b, i)
		b[at] = byte(len(b) - at - 1)
		b = appendGen(b, genAt(s.Seq, i))
		n++
	}
	b = appendName(b, "pad")
	b = appendPadValue(b, e.pat, s.Seq, e.size-len(b)-padMin)
	n++
	binary.BigEndian.PutUint16(b[countAt:], uint16(n))
	seal(b)
	return b
}

// decodeMap parses every entry into a map (as a JMS MapMessage receiver
// would), then checks each entry against the stamp.
func decodeMap(p []byte, s Stamp) error {
	if len(p) < 2 {
		return corrupt("map payload of %d bytes has no entry count", len(p))
	}
	count := int(binary.BigEndian.Uint16(p))
	off := 2
	const minEntry = 1 + 1 + 1 + 1 // name length, 1-byte name, tag, bool
	if count < mapCore+1 || count > (len(p)-off)/minEntry {
		return corrupt("map entry count %d impossible for a %d-byte payload", count, len(p))
	}
	m := make(map[string]tagged, count)
	for k := 0; k < count; k++ {
		if off >= len(p) {
			return corrupt("map entry %d missing", k)
		}
		nl := int(p[off])
		off++
		if nl == 0 || nl > len(p)-off {
			return corrupt("map entry %d has a bad name length %d", k, nl)
		}
		name := string(p[off : off+nl])
		off += nl
		v, next, err := readTagged(p, off)
		if err != nil {
			return err
		}
		off = next
		if _, dup := m[name]; dup {
			return corrupt("duplicate map entry %q", name)
		}
		m[name] = v
	}
	if off != len(p) {
		return corrupt("%d bytes after the last map entry", len(p)-off)
	}
	return checkMap(m, s)
}

func checkMap(m map[string]tagged, s Stamp) error {
	want := []struct {
		name string
		tag  byte
		num  uint64
	}{
		{"seq", tagInt64, s.Seq},
		{"pub", tagInt64, uint64(s.Publisher)},
		{"sel", tagInt32, uint64(uint32(int32(s.Sel)))},
		{"sent", tagInt64, uint64(s.SentNanos)},
	}
	for _, w := range want {
		v, ok := m[w.name]
		if !ok || v.tag != w.tag || v.num != w.num {
			return corrupt("map entry %q missing or does not match the stamp", w.name)
		}
	}
	pad, ok := m["pad"]
	if !ok || pad.tag != tagBytes || !checkPad(pad.raw, s.Seq) {
		return corrupt("map pad entry missing or wrong")
	}
	var nb [mapMaxName]byte
	for i := 0; i < len(m)-mapCore-1; i++ {
		v, ok := m[string(appendGenName(nb[:0], i))]
		if !ok || !v.matches(genAt(s.Seq, i)) {
			return corrupt("map entry %d missing or wrong", i)
		}
	}
	return nil
}
