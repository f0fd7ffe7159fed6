package body

import "math/rand/v2"

// bytesEncoder writes BytesMessage bodies: the stamp and an opaque payload,
// the application's byte array, copied in per message. It is the cheapest
// codec by design; the CRC over the whole body is its integrity check.
type bytesEncoder struct {
	payload []byte
}

func newBytesEncoder(size int, seed int64) *bytesEncoder {
	r := rand.New(rand.NewPCG(uint64(seed), 0x62797465730a)) // "bytes"
	p := make([]byte, size-StampSize)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return &bytesEncoder{payload: p}
}

func (e *bytesEncoder) Encode(dst []byte, s Stamp) []byte {
	b := begin(dst, StampSize+len(e.payload), codeBytes, s)
	b = append(b, e.payload...)
	seal(b)
	return b
}
