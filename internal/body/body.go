package body

import (
	"encoding/binary"
	"fmt"

	"pslab/internal/scenario"
)

// Encoder builds message bodies of one type and size. It is not safe for
// concurrent use: give each publisher its own.
type Encoder interface {
	// Encode writes one complete body for s into dst's storage, starting at
	// dst[:0] (the old content of dst is overwritten, its capacity reused),
	// and returns it. The body is exactly the encoder's size for bytes, text,
	// map and stream, and within ±1 % of it for object. s.Seq must be >= 1 and
	// s.Sel in -1..99, or Decode will reject the body.
	Encode(dst []byte, s Stamp) []byte
}

// MinSize is the smallest body size (stamp included) NewEncoder accepts for t,
// or 0 for an unknown type.
func MinSize(t scenario.BodyType) int {
	switch t {
	case scenario.BodyBytes:
		return StampSize
	case scenario.BodyText:
		return StampSize + maxTextHeader
	case scenario.BodyMap:
		return StampSize + mapMinPayload
	case scenario.BodyStream:
		return StampSize + streamMinPayload
	case scenario.BodyObject:
		return StampSize + objectMinPayload()
	}
	return 0
}

// NewEncoder returns an encoder of bodies of type t and size bytes (stamp
// included). seed selects the filler content of bytes and text bodies; map,
// stream and object content is derived from each message's stamp so the
// receiver can check it.
func NewEncoder(t scenario.BodyType, size int, seed int64) (Encoder, error) {
	code, ok := typeCode(t)
	if !ok {
		return nil, fmt.Errorf("body: unknown body type %q", string(t))
	}
	if min := MinSize(t); size < min {
		return nil, fmt.Errorf("body: a %s body needs at least %d bytes (stamp included), got %d", t, min, size)
	}
	const maxSize = scenario.MaxBodySize
	if size > maxSize {
		return nil, fmt.Errorf("body: size %d exceeds the %d-byte limit", size, maxSize)
	}
	switch code {
	case codeBytes:
		return newBytesEncoder(size, seed), nil
	case codeText:
		return newTextEncoder(size, seed), nil
	case codeMap:
		return newMapEncoder(size), nil
	case codeStream:
		return newStreamEncoder(size), nil
	default:
		return newObjectEncoder(size)
	}
}

// begin starts a body in dst's storage: a stamp with a zero CRC.
func begin(dst []byte, size int, code byte, s Stamp) []byte {
	b := dst[:0]
	if cap(b) < size {
		b = make([]byte, 0, size)
	}
	b = b[:StampSize]
	putStamp(b, code, s)
	return b
}

// Decode reads the stamp, verifies the CRC, and fully decodes and checks the
// payload of the type the stamp names. Every error wraps ErrCorrupt.
func Decode(b []byte) (Stamp, scenario.BodyType, error) {
	s, t, err := PeekStamp(b)
	if err != nil {
		return s, t, err
	}
	if got, want := bodyCRC(b), binary.BigEndian.Uint32(b[offCRC:]); got != want {
		return s, t, corrupt("CRC-32C mismatch (computed %08x, stamped %08x)", got, want)
	}
	p := b[StampSize:]
	switch t {
	case scenario.BodyBytes:
		err = nil // the CRC covered every byte; a bytes payload has no structure
	case scenario.BodyText:
		err = decodeText(p, s)
	case scenario.BodyMap:
		err = decodeMap(p, s)
	case scenario.BodyStream:
		err = decodeStream(p, s)
	case scenario.BodyObject:
		err = decodeObject(p, s)
	}
	if err != nil {
		return s, t, fmt.Errorf("%s body: %w", t, err)
	}
	return s, t, nil
}
