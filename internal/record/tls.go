package record

import (
	"slices"
	"sort"
	"time"
)

// Handshake is one TLS handshake of a client connection, timed on the
// client with the monotonic clock from the TCP connection being up to the
// handshake being done (the server's certificate verified).
type Handshake struct {
	Took time.Duration
	// Reconnect: the client's connection came back after a loss (not its
	// first connection).
	Reconnect       bool
	Version, Cipher string // as crypto/tls names them, e.g. "TLS 1.3", "TLS_AES_128_GCM_SHA256"
}

// TLS is what TLS cost the client connections of a case with tls: on (the
// record's result.tls block).
type TLS struct {
	// Connections counts the clients' first handshakes, Reconnects the
	// handshakes of connections that came back after a loss, Failed the
	// handshakes that did not complete.
	Connections int `json:"connections"`
	Reconnects  int `json:"reconnects,omitempty"`
	Failed      int `json:"failed,omitempty"`
	// Version and Cipher are what was negotiated ("mixed" when the
	// connections differed).
	Version string `json:"version,omitempty"`
	Cipher  string `json:"cipher,omitempty"`
	// HandshakeMs summarises the first handshakes, ReconnectHandshakeMs
	// those of reconnections, in milliseconds.
	HandshakeMs          *Spread `json:"handshake_ms,omitempty"`
	ReconnectHandshakeMs *Spread `json:"reconnect_handshake_ms,omitempty"`
	// ReconnectMs summarises, in milliseconds, how long client
	// connections were unusable when they were lost and came back: from
	// the loss being noticed to the client being usable again (TLS
	// handshake included).
	ReconnectMs *Spread `json:"reconnect_ms,omitempty"`

	// Handshakes are the handshakes summarised, for merging the parts of
	// a sharded case (not written).
	Handshakes []Handshake `json:"-"`
	Outages    []float64   `json:"-"` // reconnect times (ms), likewise
}

// Spread summarises a set of durations in milliseconds.
type Spread struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// SpreadOf summarises ms (nil when it is empty). Percentiles are the
// nearest rank.
func SpreadOf(ms []float64) *Spread {
	if len(ms) == 0 {
		return nil
	}
	s := slices.Clone(ms)
	sort.Float64s(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	rank := func(p float64) float64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return &Spread{Mean: sum / float64(len(s)), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1]}
}

// TLSOf summarises a case's handshakes, failed handshakes and the
// reconnect times of its connections (ms).
func TLSOf(hs []Handshake, failed int, reconnectMs []float64) *TLS {
	t := &TLS{Failed: failed, Handshakes: hs, Outages: reconnectMs}
	var first, again []float64
	for _, h := range hs {
		ms := float64(h.Took) / float64(time.Millisecond)
		if h.Reconnect {
			t.Reconnects++
			again = append(again, ms)
		} else {
			t.Connections++
			first = append(first, ms)
		}
		t.Version = sameOrMixed(t.Version, h.Version)
		t.Cipher = sameOrMixed(t.Cipher, h.Cipher)
	}
	t.HandshakeMs, t.ReconnectHandshakeMs, t.ReconnectMs = SpreadOf(first), SpreadOf(again), SpreadOf(reconnectMs)
	return t
}

// MergeTLS is the TLS block of a case run in parts (shards); nil when no
// part has one.
func MergeTLS(parts ...*TLS) *TLS {
	var hs []Handshake
	var out []float64
	failed, some := 0, false
	for _, p := range parts {
		if p == nil {
			continue
		}
		some = true
		hs, out, failed = append(hs, p.Handshakes...), append(out, p.Outages...), failed+p.Failed
	}
	if !some {
		return nil
	}
	return TLSOf(hs, failed, out)
}

func sameOrMixed(have, v string) string {
	switch {
	case have == "" || have == v:
		return v
	default:
		return "mixed"
	}
}
