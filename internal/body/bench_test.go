package body

import (
	"fmt"
	"testing"

	"pslab/internal/scenario"
)

// Benchmarks per codec and size: go test -bench . -benchmem ./internal/body/
func BenchmarkEncode(b *testing.B) {
	for _, bt := range scenario.BodyTypes {
		for _, size := range []int{100, 2048, 5120} {
			if size < MinSize(bt) {
				continue
			}
			b.Run(fmt.Sprintf("%s/%d", bt, size), func(b *testing.B) {
				enc, err := NewEncoder(bt, size, 1)
				if err != nil {
					b.Fatal(err)
				}
				buf := make([]byte, 0, size)
				b.SetBytes(int64(size))
				seq := uint64(0)
				for b.Loop() {
					seq++
					buf = enc.Encode(buf, Stamp{Publisher: 1, Seq: seq, SentNanos: int64(seq), Sel: int16(seq % 100)})
				}
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, bt := range scenario.BodyTypes {
		for _, size := range []int{100, 2048, 5120} {
			if size < MinSize(bt) {
				continue
			}
			b.Run(fmt.Sprintf("%s/%d", bt, size), func(b *testing.B) {
				enc, err := NewEncoder(bt, size, 1)
				if err != nil {
					b.Fatal(err)
				}
				bodies := make([][]byte, 64)
				for i := range bodies {
					bodies[i] = enc.Encode(nil, Stamp{Publisher: 1, Seq: uint64(i + 1), SentNanos: int64(i), Sel: int16(i)})
				}
				b.SetBytes(int64(size))
				i := 0
				for b.Loop() {
					if _, _, err := Decode(bodies[i%len(bodies)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

func BenchmarkPeekStamp(b *testing.B) {
	enc, _ := NewEncoder(scenario.BodyObject, 2048, 1)
	body := enc.Encode(nil, Stamp{Seq: 1, Sel: -1})
	for b.Loop() {
		if _, _, err := PeekStamp(body); err != nil {
			b.Fatal(err)
		}
	}
}
