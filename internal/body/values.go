package body

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
)

// Value tags shared by the map and stream codecs (docs/bodies.md).
const (
	tagBool    = 1 // 1 byte, 0 or 1
	tagInt32   = 2 // 4 bytes
	tagInt64   = 3 // 8 bytes
	tagFloat64 = 4 // 8 bytes IEEE 754
	tagString  = 5 // uint32 length + UTF-8 bytes
	tagBytes   = 6 // uint32 length + bytes
)

// maxGen bounds the generated entries (map) or elements (stream) per body;
// beyond it the pad grows instead, so huge bodies stay bounded in count.
const maxGen = 4096

// maxGenSize is an upper bound on one generated tagged value (tag included).
const maxGenSize = 1 + 4 + maxPhraseLen

// padMin is the size of an empty tagged bytes value (tag + length).
const padMin = 1 + 4

// phrases are the string values the generators pick from (some non-ASCII, so
// the UTF-8 paths are exercised). All are valid UTF-8 and at most maxPhraseLen bytes.
var phrases = [...]string{
	"alpha", "bravo charlie", "delta echo foxtrot", "golf", "hotel india juliett",
	"kilo lima", "mike november oscar papa", "quebec", "romeo sierra", "tango uniform victor",
	"whiskey x-ray", "yankee zulu", "Zürich Hauptbahnhof", "naïve café", "Größenordnung",
	"μs latency", "東京 駅", "señal inalámbrica", "Ωmega-3", "throughput", "802.11b link at 1 Mbit/s",
	"durable subscription", "persistent delivery", "DUPS_OK_ACKNOWLEDGE", "message selector sel >= 20",
	"publish/subscribe", "broker", "wireless", "latency", "jitter", "loss", "queue depth",
}

const maxPhraseLen = 40

// mix is splitmix64 over (seq, i): the generated content of a body is a pure
// function of its stamp, so the receiver can check every value.
func mix(seq, i uint64) uint64 {
	z := seq*0x9E3779B97F4A7C15 + i*0xD1B54A32D192ED03 + 0x632BE59BD9B4E019
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// gen is the expected value number i of a body with sequence number seq.
type gen struct {
	tag  byte
	num  uint64 // bool (0/1), int32, int64 or float64 bits
	str  string // tagString
	blen int    // tagBytes length; content from genByte
	x    uint64 // mixer output, seeds genByte
}

func genAt(seq uint64, i int) gen {
	x := mix(seq, uint64(i))
	switch i % 6 {
	case 0:
		return gen{tag: tagString, str: phrases[x%uint64(len(phrases))]}
	case 1:
		return gen{tag: tagInt32, num: uint64(uint32(x))}
	case 2:
		return gen{tag: tagInt64, num: x}
	case 3:
		return gen{tag: tagFloat64, num: math.Float64bits(float64(int64(x>>11)) / 1024)}
	case 4:
		return gen{tag: tagBool, num: x & 1}
	default:
		return gen{tag: tagBytes, blen: 16 + int(x%17), x: x}
	}
}

func genByte(x uint64, j int) byte {
	return byte(x>>(uint(j%8)*8)) ^ byte(j*31)
}

// genName is the map entry name of generated value i: a kind letter and i.
func appendGenName(b []byte, i int) []byte {
	b = append(b, "sildby"[i%6])
	return strconv.AppendInt(b, int64(i), 10)
}

// appendGen writes generated value i (tag and value).
func appendGen(b []byte, g gen) []byte {
	b = append(b, g.tag)
	switch g.tag {
	case tagString:
		b = binary.BigEndian.AppendUint32(b, uint32(len(g.str)))
		b = append(b, g.str...)
	case tagInt32:
		b = binary.BigEndian.AppendUint32(b, uint32(g.num))
	case tagInt64, tagFloat64:
		b = binary.BigEndian.AppendUint64(b, g.num)
	case tagBool:
		b = append(b, byte(g.num))
	case tagBytes:
		b = binary.BigEndian.AppendUint32(b, uint32(g.blen))
		for j := 0; j < g.blen; j++ {
			b = append(b, genByte(g.x, j))
		}
	}
	return b
}

// tagged is one decoded tagged value. For strings and bytes, raw aliases the
// payload; str is set for strings (a real copy, as a JMS getString would make).
type tagged struct {
	tag byte
	num uint64
	str string
	raw []byte
}

// readTagged decodes one tagged value at p[off:], bounds-checked.
func readTagged(p []byte, off int) (tagged, int, error) {
	if off >= len(p) {
		return tagged{}, off, corrupt("value tag missing at offset %d", off)
	}
	v := tagged{tag: p[off]}
	off++
	need := func(n int) error {
		if len(p)-off < n {
			return corrupt("value with tag %d truncated at offset %d", v.tag, off)
		}
		return nil
	}
	switch v.tag {
	case tagBool:
		if err := need(1); err != nil {
			return v, off, err
		}
		if p[off] > 1 {
			return v, off, corrupt("bool value %d", p[off])
		}
		v.num = uint64(p[off])
		off++
	case tagInt32:
		if err := need(4); err != nil {
			return v, off, err
		}
		v.num = uint64(binary.BigEndian.Uint32(p[off:]))
		off += 4
	case tagInt64, tagFloat64:
		if err := need(8); err != nil {
			return v, off, err
		}
		v.num = binary.BigEndian.Uint64(p[off:])
		off += 8
	case tagString, tagBytes:
		if err := need(4); err != nil {
			return v, off, err
		}
		n := binary.BigEndian.Uint32(p[off:])
		off += 4
		if uint64(n) > uint64(len(p)-off) {
			return v, off, corrupt("length %d overruns the payload at offset %d", n, off)
		}
		v.raw = p[off : off+int(n)]
		off += int(n)
		if v.tag == tagString {
			if !utf8.Valid(v.raw) {
				return v, off, corrupt("string value is not valid UTF-8")
			}
			v.str = string(v.raw)
		}
	default:
		return v, off, corrupt("unknown value tag %d at offset %d", v.tag, off-1)
	}
	return v, off, nil
}

// matches reports whether a decoded value equals the generated one.
func (v tagged) matches(g gen) bool {
	if v.tag != g.tag {
		return false
	}
	switch g.tag {
	case tagString:
		return v.str == g.str
	case tagBytes:
		if len(v.raw) != g.blen {
			return false
		}
		for j, c := range v.raw {
			if c != genByte(g.x, j) {
				return false
			}
		}
		return true
	default:
		return v.num == g.num
	}
}

// Pad content: byte j of the pad of a body with sequence seq is
// 'a' + (seq + j) mod 26, so a pad is checked without knowing the encoder.
func padPattern(n int) string {
	b := make([]byte, n+26)
	for k := range b {
		b[k] = 'a' + byte(k%26)
	}
	return string(b)
}

// padFor returns the pad of length n for seq from a pattern made by padPattern(>= n).
func padFor(pat string, seq uint64, n int) string {
	o := int(seq % 26)
	return pat[o : o+n]
}

func checkPad[T string | []byte](p T, seq uint64) bool {
	c := byte(seq % 26)
	for i := 0; i < len(p); i++ {
		if p[i] != 'a'+c {
			return false
		}
		c++
		if c == 26 {
			c = 0
		}
	}
	return true
}

func appendInt64Value(b []byte, v int64) []byte {
	b = append(b, tagInt64)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func appendInt32Value(b []byte, v int32) []byte {
	b = append(b, tagInt32)
	return binary.BigEndian.AppendUint32(b, uint32(v))
}

func appendPadValue(b []byte, pat string, seq uint64, n int) []byte {
	b = append(b, tagBytes)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	return append(b, padFor(pat, seq, n)...)
}
