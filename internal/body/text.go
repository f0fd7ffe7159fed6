package body

import (
	"math/rand/v2"
	"strconv"
	"unicode/utf8"
)

// A text payload is UTF-8: a header line "seq=<seq> pub=<publisher>\n" and
// then the application's text, cut at a rune boundary and completed with '.'
// to the exact size.
const maxTextHeader = len("seq=18446744073709551615 pub=4294967295\n")

// textEncoder writes TextMessage bodies. The application text is held as
// runes (as a JMS String holds UTF-16 chars) and encoded to UTF-8 for every
// message; the receiver decodes every rune back.
type textEncoder struct {
	size  int
	runes []rune
}

var textWords = [...]string{
	"the", "broker", "forwards", "each", "message", "to", "every", "subscriber",
	"whose", "selector", "matches;", "über", "ein", "drahtloses", "Netz", "mit",
	"1 Mbit/s", "und", "3 %", "Verlust.", "la", "latence", "mesurée", "en", "µs",
	"reste", "faible", "sur", "le", "réseau", "filaire.", "遅延", "と", "スループット",
	"publish/subscribe", "middleware", "over", "802.11", "links", "—", "Ω", "≈", "±1 %",
}

func newTextEncoder(size int, seed int64) *textEncoder {
	r := rand.New(rand.NewPCG(uint64(seed), 0x746578740a)) // "text"
	need := size - StampSize
	var runes []rune
	n, line := 0, 0
	for n < need {
		w := textWords[r.IntN(len(textWords))]
		for _, c := range w {
			runes = append(runes, c)
			n += utf8.RuneLen(c)
		}
		line++
		sep := ' '
		if line%12 == 0 {
			sep = '\n'
		}
		runes = append(runes, sep)
		n++
	}
	return &textEncoder{size: size, runes: runes}
}

func (e *textEncoder) Encode(dst []byte, s Stamp) []byte {
	b := begin(dst, e.size, codeText, s)
	b = append(b, "seq="...)
	b = strconv.AppendUint(b, s.Seq, 10)
	b = append(b, " pub="...)
	b = strconv.AppendUint(b, uint64(s.Publisher), 10)
	b = append(b, '\n')
	for _, c := range e.runes {
		if c < utf8.RuneSelf {
			if len(b)+1 > e.size {
				break
			}
			b = append(b, byte(c))
			continue
		}
		if len(b)+utf8.RuneLen(c) > e.size {
			break
		}
		b = utf8.AppendRune(b, c)
	}
	for len(b) < e.size {
		b = append(b, '.')
	}
	seal(b)
	return b
}

// decodeText decodes every rune (rejecting invalid UTF-8) and checks the
// header against the stamp.
func decodeText(p []byte, s Stamp) error {
	for i := 0; i < len(p); {
		if p[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			return corrupt("invalid UTF-8 at payload offset %d", i)
		}
		i += n
	}
	rest, ok := cutPrefix(p, "seq=")
	if !ok {
		return corrupt("text header does not start with \"seq=\"")
	}
	seq, rest, ok := cutUint(rest, 64)
	if !ok || seq != s.Seq {
		return corrupt("text header seq does not match stamp seq %d", s.Seq)
	}
	rest, ok = cutPrefix(rest, " pub=")
	if !ok {
		return corrupt("text header lacks \" pub=\"")
	}
	pub, rest, ok := cutUint(rest, 32)
	if !ok || pub != uint64(s.Publisher) {
		return corrupt("text header pub does not match stamp publisher %d", s.Publisher)
	}
	if len(rest) == 0 || rest[0] != '\n' {
		return corrupt("text header not ended by a newline")
	}
	return nil
}

func cutPrefix(p []byte, prefix string) ([]byte, bool) {
	if len(p) < len(prefix) || string(p[:len(prefix)]) != prefix {
		return p, false
	}
	return p[len(prefix):], true
}

// cutUint parses a decimal number of at most bits bits at the start of p.
func cutUint(p []byte, bits int) (uint64, []byte, bool) {
	n := 0
	for n < len(p) && n < 21 && p[n] >= '0' && p[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, p, false
	}
	v, err := strconv.ParseUint(string(p[:n]), 10, bits)
	if err != nil {
		return 0, p, false
	}
	return v, p[n:], true
}
