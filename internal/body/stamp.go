// Package body builds and checks pslab message bodies.
//
// Every body is a fixed 32-byte stamp (magic, version, body type, selector
// value, publisher, sequence number, send time, CRC-32C) followed by a payload
// written by one of five codecs, the JMS message types of the paper: bytes
// (BytesMessage), text (TextMessage), map (MapMessage), stream
// (StreamMessage) and object (ObjectMessage, here encoding/gob). The size of a
// body always includes the stamp. docs/bodies.md gives the wire formats byte
// by byte.
//
// The codecs do their work per message on both ends: the map, stream and
// object codecs build their entries, elements or object graph from the stamp
// for every message, and Decode parses every entry and checks every value
// against what the stamp implies, so a body is either fully valid or rejected
// with an error wrapping ErrCorrupt. Decode never panics on hostile input.
package body

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"pslab/internal/scenario"
)

// StampSize is the number of stamp bytes at the start of every body.
const StampSize = 32

// Stamp layout (all integers big-endian). See docs/bodies.md.
const (
	offMagic     = 0  // 2 bytes "ps"
	offVersion   = 2  // 1 byte
	offType      = 3  // 1 byte type code
	offSel       = 4  // int16
	offReserved  = 6  // 2 bytes, zero
	offPublisher = 8  // uint32
	offSeq       = 12 // uint64
	offSent      = 20 // int64
	offCRC       = 28 // uint32 CRC-32C of body[0:28] and body[32:]
)

const (
	magic0  = 'p'
	magic1  = 's'
	version = 1
)

// Type codes on the wire.
const (
	codeBytes  = 1
	codeText   = 2
	codeMap    = 3
	codeStream = 4
	codeObject = 5
)

// ErrCorrupt is wrapped by every error Decode and PeekStamp return: the body
// is truncated, malformed, or its content does not match its stamp.
var ErrCorrupt = errors.New("corrupt message body")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Stamp is what pslab needs to account for every message: who sent it, its
// place in the publisher's sequence, when it was sent and its selector value.
type Stamp struct {
	Publisher uint32
	Seq       uint64 // 1-based per publisher
	SentNanos int64  // monotonic ns (the load engine's clock)
	Sel       int16  // selector value 0..99 or filter value 0..MaxFilterValues-1, or -1
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func typeCode(t scenario.BodyType) (byte, bool) {
	switch t {
	case scenario.BodyBytes:
		return codeBytes, true
	case scenario.BodyText:
		return codeText, true
	case scenario.BodyMap:
		return codeMap, true
	case scenario.BodyStream:
		return codeStream, true
	case scenario.BodyObject:
		return codeObject, true
	}
	return 0, false
}

func typeOf(code byte) (scenario.BodyType, bool) {
	switch code {
	case codeBytes:
		return scenario.BodyBytes, true
	case codeText:
		return scenario.BodyText, true
	case codeMap:
		return scenario.BodyMap, true
	case codeStream:
		return scenario.BodyStream, true
	case codeObject:
		return scenario.BodyObject, true
	}
	return "", false
}

// putStamp writes the stamp (without CRC) into b[0:StampSize].
func putStamp(b []byte, code byte, s Stamp) {
	b[offMagic] = magic0
	b[offMagic+1] = magic1
	b[offVersion] = version
	b[offType] = code
	binary.BigEndian.PutUint16(b[offSel:], uint16(s.Sel))
	b[offReserved], b[offReserved+1] = 0, 0
	binary.BigEndian.PutUint32(b[offPublisher:], s.Publisher)
	binary.BigEndian.PutUint64(b[offSeq:], s.Seq)
	binary.BigEndian.PutUint64(b[offSent:], uint64(s.SentNanos))
	binary.BigEndian.PutUint32(b[offCRC:], 0)
}

// bodyCRC is the CRC-32C of the whole body except the CRC field itself.
func bodyCRC(b []byte) uint32 {
	c := crc32.Update(0, crcTable, b[:offCRC])
	return crc32.Update(c, crcTable, b[StampSize:])
}

// seal writes the CRC of a complete body.
func seal(b []byte) {
	binary.BigEndian.PutUint32(b[offCRC:], bodyCRC(b))
}

// PeekStamp reads and validates the stamp only: no CRC check, no payload
// decode. It is cheap and meant for accounting before (or instead of) Decode.
func PeekStamp(b []byte) (Stamp, scenario.BodyType, error) {
	if len(b) < StampSize {
		return Stamp{}, "", corrupt("body is %d bytes, shorter than the %d-byte stamp", len(b), StampSize)
	}
	if b[offMagic] != magic0 || b[offMagic+1] != magic1 {
		return Stamp{}, "", corrupt("bad magic %#x %#x", b[offMagic], b[offMagic+1])
	}
	if b[offVersion] != version {
		return Stamp{}, "", corrupt("unsupported stamp version %d", b[offVersion])
	}
	t, ok := typeOf(b[offType])
	if !ok {
		return Stamp{}, "", corrupt("unknown body type code %d", b[offType])
	}
	if b[offReserved] != 0 || b[offReserved+1] != 0 {
		return Stamp{}, "", corrupt("reserved stamp bytes are not zero")
	}
	s := Stamp{
		Sel:       int16(binary.BigEndian.Uint16(b[offSel:])),
		Publisher: binary.BigEndian.Uint32(b[offPublisher:]),
		Seq:       binary.BigEndian.Uint64(b[offSeq:]),
		SentNanos: int64(binary.BigEndian.Uint64(b[offSent:])),
	}
	// Selector values are 0..99; filter values reach MaxFilterValues-1
	// (Henjes's experiments use up to 160 and more).
	if s.Sel < -1 || s.Sel >= scenario.MaxFilterValues {
		return Stamp{}, "", corrupt("selector or filter value %d outside -1..%d", s.Sel, scenario.MaxFilterValues-1)
	}
	if s.Seq == 0 {
		return Stamp{}, "", corrupt("sequence number 0 (sequences are 1-based)")
	}
	return s, t, nil
}
