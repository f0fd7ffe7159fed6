package body

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"strconv"
	"sync"
)

// An object payload (ObjectMessage) is one self-contained encoding/gob stream
// holding an order graph: an order with a nested customer and address, a
// slice of order lines (each with a slice of tags), a map of attributes and a
// note. A new gob.Encoder and gob.Decoder are used for every message, so the
// type descriptors travel with each body, as Java serialization writes class
// descriptors into each ObjectMessage. The number of lines grows with the
// size; the note pads the graph to the exact size.

type order struct {
	ID        uint64 // = stamp seq
	Publisher uint32
	Sel       int16
	Created   int64 // = stamp send time
	Customer  customer
	Lines     []orderLine
	Attrs     map[string]string
	Note      string // the pad
}

type customer struct {
	ID      int64
	Name    string
	Email   string
	Address address
	Rating  float64
}

type address struct {
	Street, City, Postcode, Country string
}

type orderLine struct {
	SKU       string
	Qty       int32
	UnitPrice float64
	Tags      []string
}

var (
	objNames     = [...]string{"Ada Lovelace", "Grace Hopper", "Jürgen Müller", "Zoë Faure", "Sven Öberg", "山田 太郎", "Amaal Gaddah", "Thomas Kunz", "Olga Petrova"}
	objStreets   = [...]string{"Main Street", "Königsallee", "Rue Sainte-Catherine", "Bank Street", "Elgin St", "Avenida Paulista"}
	objCities    = [...]string{"Ottawa", "Zürich", "München", "東京", "Montréal", "São Paulo", "Berlin"}
	objCountries = [...]string{"CA", "CH", "DE", "JP", "BR"}
	objChannels  = [...]string{"web", "mobile", "partner", "store", "batch"}
	objRegions   = [...]string{"eu-west", "na-east", "ap-south", "sa-east"}
)

func maxLen(ws []string) int {
	m := 0
	for _, w := range ws {
		m = max(m, len(w))
	}
	return m
}

func pick(ws []string, x uint64) string { return ws[x%uint64(len(ws))] }

// fixedHex formats the low n hex digits of x, zero-padded.
func fixedHex(prefix string, x uint64, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, len(prefix)+n)
	copy(b, prefix)
	for i := len(b) - 1; i >= len(prefix); i-- {
		b[i] = digits[x&15]
		x >>= 4
	}
	return string(b)
}

// fullMantissa is a float64 in [1, 2) whose lowest mantissa bit is set, so
// gob always encodes it in 9 bytes.
func fullMantissa(x uint64) float64 {
	return 1 + float64((x>>12)|1)/(1<<52)
}

// genOrder fills o for stamp s with n lines; every value is a function of the
// stamp so the receiver can rebuild and compare it. The note is left alone.
func genOrder(o *order, s Stamp, n int) {
	x := mix(s.Seq, 1<<40|uint64(s.Publisher))
	o.ID, o.Publisher, o.Sel, o.Created = s.Seq, s.Publisher, s.Sel, s.SentNanos
	o.Customer = customer{
		ID:    int64(1<<40 | x>>25), // 6 significant bytes: fixed gob width
		Name:  pick(objNames[:], x),
		Email: fixedHex("user-", x>>7, 8) + "@example.org",
		Address: address{
			Street:   pick(objStreets[:], x>>11),
			City:     pick(objCities[:], x>>17),
			Postcode: strconv.Itoa(10000 + int(x>>23)%90000),
			Country:  pick(objCountries[:], x>>29),
		},
		Rating: fullMantissa(x),
	}
	if cap(o.Lines) < n {
		o.Lines = make([]orderLine, n)
	}
	o.Lines = o.Lines[:n]
	for i := range o.Lines {
		y := mix(s.Seq, 1<<41|uint64(i))
		l := &o.Lines[i]
		l.SKU = fixedHex("SKU-", y, 8)
		l.Qty = int32(128 + y%32000)       // gob width fixed at 3 bytes
		l.UnitPrice = fullMantissa(y) * 16 // a power of two keeps the mantissa
		if cap(l.Tags) < 2 {
			l.Tags = make([]string, 2)
		}
		l.Tags = l.Tags[:2]
		l.Tags[0] = fixedHex("T-", y>>32, 4)
		l.Tags[1] = fixedHex("T-", y>>48, 4)
	}
	if o.Attrs == nil {
		o.Attrs = make(map[string]string, 3)
	}
	o.Attrs["channel"] = pick(objChannels[:], x>>31)
	o.Attrs["region"] = pick(objRegions[:], x>>37)
	o.Attrs["priority"] = strconv.Itoa(int(x>>43) % 10)
}

// gobUintLen is the length of gob's encoding of an unsigned integer.
func gobUintLen(u uint64) int {
	if u < 128 {
		return 1
	}
	n := 1
	for ; u > 0; u >>= 8 {
		n++
	}
	return n
}

func gobIntLen(i int64) int {
	u := uint64(i) << 1
	if i < 0 {
		u = uint64(^i)<<1 | 1
	}
	return gobUintLen(u)
}

// fieldLen is what a non-zero scalar field costs (field delta + value); gob
// omits zero fields.
func uintField(u uint64) int {
	if u == 0 {
		return 0
	}
	return 1 + gobUintLen(u)
}

func intField(i int64) int {
	if i == 0 {
		return 0
	}
	return 1 + gobIntLen(i)
}

func padField(n int) int {
	if n == 0 {
		return 0
	}
	return 1 + gobUintLen(uint64(n)) + n
}

// varLen is the part of an order's gob value that varies between messages of
// one encoder: the stamp fields and the picked strings (all < 128 bytes, so
// their length prefixes are one byte). Everything else has a fixed width.
func varLen(o *order) int {
	return uintField(o.ID) + uintField(uint64(o.Publisher)) + intField(int64(o.Sel)) + intField(o.Created) +
		len(o.Customer.Name) + len(o.Customer.Address.Street) + len(o.Customer.Address.City) +
		len(o.Attrs["channel"]) + len(o.Attrs["region"])
}

// worstVarLen bounds varLen over all stamps.
func worstVarLen() int {
	return uintField(math.MaxUint64) + uintField(math.MaxUint32) + intField(-100) + intField(math.MinInt64) +
		maxLen(objNames[:]) + maxLen(objStreets[:]) + maxLen(objCities[:]) + maxLen(objChannels[:]) + maxLen(objRegions[:])
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// gobGeometry measures, for orders with n lines, the bytes of the type
// descriptors (types) and the fixed part of the value message (fixed), so
// that a body's size is types + uintLen(V) + V with V = fixed + varLen + padField.
func gobGeometry(n int) (types, fixed int, err error) {
	var o order
	genOrder(&o, Stamp{Publisher: 1, Seq: 1, SentNanos: 1}, n)
	var w appendWriter
	enc := gob.NewEncoder(&w)
	if err := enc.Encode(&o); err != nil {
		return 0, 0, err
	}
	first := len(w.b)
	if err := enc.Encode(&o); err != nil { // no descriptors the second time
		return 0, 0, err
	}
	second := len(w.b) - first
	v, ok := solveLen(second)
	if !ok {
		return 0, 0, fmt.Errorf("body: cannot split gob message of %d bytes", second)
	}
	return first - second, v - varLen(&o), nil
}

// solveLen finds V with gobUintLen(V) + V == total.
func solveLen(total int) (int, bool) {
	for w := 1; w <= 9 && w < total; w++ {
		if v := total - w; gobUintLen(uint64(v)) == w {
			return v, true
		}
	}
	return 0, false
}

// solvePad finds the note length whose field costs c bytes (or the closest below).
func solvePad(c int) int {
	for ; c >= 3; c-- {
		for w := 1; w <= 9; w++ {
			if n := c - 1 - w; n >= 1 && gobUintLen(uint64(n)) == w {
				return n
			}
		}
	}
	return 0
}

var objMin struct {
	once sync.Once
	n    int
}

// noteMin is the smallest field a note takes (delta, length, one byte): the
// note is never empty, so a body always has room to pad to its exact size
// and the receiver can insist on a note.
const noteMin = 3

// objectMinPayload is the smallest object payload: one line, the worst-case
// varying part, the shortest note.
func objectMinPayload() int {
	objMin.once.Do(func() {
		types, fixed, err := gobGeometry(1)
		if err != nil {
			panic(err) // encoding our own fixed types cannot fail
		}
		v := fixed + worstVarLen() + noteMin
		objMin.n = types + gobUintLen(uint64(v)) + v
	})
	return objMin.n
}

type objectEncoder struct {
	size   int
	lines  int
	types  int
	fixed  int
	pat    string
	o      order
	misses int // bodies whose size the model missed (tests assert 0)
}

func newObjectEncoder(size int) (*objectEncoder, error) {
	payload := size - StampSize
	_, fixed1, err := gobGeometry(1)
	if err != nil {
		return nil, err
	}
	_, fixed2, err := gobGeometry(2)
	if err != nil {
		return nil, err
	}
	perLine := fixed2 - fixed1
	n := 1 + (payload-objectMinPayload())/perLine
	for ; n >= 1; n-- {
		types, fixed, err := gobGeometry(n)
		if err != nil {
			return nil, err
		}
		v := fixed + worstVarLen() + noteMin
		if types+gobUintLen(uint64(v))+v <= payload {
			return &objectEncoder{size: size, lines: n, types: types, fixed: fixed, pat: padPattern(payload)}, nil
		}
	}
	return nil, fmt.Errorf("body: object payload of %d bytes too small", payload)
}

// Encode builds the order graph for s and serializes it with a new gob encoder.
func (e *objectEncoder) Encode(dst []byte, s Stamp) []byte {
	b := begin(dst, e.size, codeObject, s)
	genOrder(&e.o, s, e.lines)
	v, ok := solveLen(e.size - StampSize - e.types)
	if !ok { // no exact split at a length-prefix boundary: one byte short
		v, _ = solveLen(e.size - StampSize - e.types - 1)
	}
	n := solvePad(v - e.fixed - varLen(&e.o))
	for try := 0; ; try++ {
		e.o.Note = padFor(e.pat, s.Seq, n)
		w := appendWriter{b: b}
		if err := gob.NewEncoder(&w).Encode(&e.o); err != nil {
			panic(fmt.Sprintf("body: gob encoding of an order failed: %v", err))
		}
		diff := e.size - len(w.b)
		if diff == 0 {
			b = w.b
			break
		}
		e.misses++
		if try > 0 || abs(diff)*100 <= e.size || n+diff < 1 {
			b = w.b
			break
		}
		n += diff // the model missed by more than 1 %: correct and encode again
	}
	seal(b)
	return b
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// decodeObject deserializes the gob stream with a new decoder, rebuilds the
// expected graph from the stamp and compares every field.
func decodeObject(p []byte, s Stamp) error {
	r := bytes.NewReader(p)
	var got order
	if err := gob.NewDecoder(r).Decode(&got); err != nil {
		return corrupt("gob: %v", err)
	}
	if r.Len() != 0 {
		return corrupt("%d bytes after the gob value", r.Len())
	}
	var want order
	genOrder(&want, s, len(got.Lines))
	if got.ID != want.ID || got.Publisher != want.Publisher || got.Sel != want.Sel || got.Created != want.Created {
		return corrupt("object header does not match the stamp")
	}
	if got.Customer != want.Customer {
		return corrupt("object customer wrong")
	}
	if len(got.Lines) == 0 {
		return corrupt("object has no lines")
	}
	for i := range got.Lines {
		g, w := &got.Lines[i], &want.Lines[i]
		if g.SKU != w.SKU || g.Qty != w.Qty || g.UnitPrice != w.UnitPrice ||
			len(g.Tags) != len(w.Tags) || g.Tags[0] != w.Tags[0] || g.Tags[1] != w.Tags[1] {
			return corrupt("object line %d wrong", i)
		}
	}
	if len(got.Attrs) != len(want.Attrs) {
		return corrupt("object has %d attributes, want %d", len(got.Attrs), len(want.Attrs))
	}
	for k, v := range want.Attrs {
		if got.Attrs[k] != v {
			return corrupt("object attribute %q wrong", k)
		}
	}
	if len(got.Note) == 0 || !checkPad(got.Note, s.Seq) {
		return corrupt("object note wrong")
	}
	return nil
}
