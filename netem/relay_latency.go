package netem

import (
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// The relay's own latency, for the benchmark's diagnosis of the round trip
// it adds (results/relay-bench): with relayLatencyEnv=1 in the environment
// of the process that starts it, the relay asks the kernel for each
// frame's receive time (SO_TIMESTAMPNS: when the sender's veth handed the
// frame to the router's receive path) and times its own reads and writes.
// It costs a clock read per frame in the kernel and a cmsg per read, so it
// is off unless asked; the control socket's "latency" op reads (and
// resets) it.
const relayLatencyEnv = "PSLAB_RELAY_LATENCY"

func relayLatencyWanted() bool { return os.Getenv(relayLatencyEnv) == "1" }

// latencyBucketsUs are the upper bounds of relayLatency's histograms, in µs.
var latencyBucketsUs = [...]int64{5, 10, 20, 50, 100, 200, 500, 1000}

// latencyHist is a count, sum, maximum and coarse histogram of durations.
type latencyHist struct {
	N       uint64   `json:"n"`
	SumNs   int64    `json:"sum_ns"`
	MaxNs   int64    `json:"max_ns"`
	Buckets []uint64 `json:"buckets"` // by latencyBucketsUs, the last one above them all
}

func (h *latencyHist) add(ns int64) {
	if h.Buckets == nil {
		h.Buckets = make([]uint64, len(latencyBucketsUs)+1)
	}
	ns = max(ns, 0)
	h.N++
	h.SumNs += ns
	h.MaxNs = max(h.MaxNs, ns)
	i := 0
	for i < len(latencyBucketsUs) && ns > latencyBucketsUs[i]*1000 {
		i++
	}
	h.Buckets[i]++
}

// MeanUs is the mean in µs (0 without samples).
func (h latencyHist) MeanUs() float64 {
	if h.N == 0 {
		return 0
	}
	return float64(h.SumNs) / float64(h.N) / 1000
}

// MedianUs is the upper bound of the bucket holding the median (-1 when
// it is above every bound, 0 without samples).
func (h latencyHist) MedianUs() int64 {
	var seen uint64
	for i, c := range h.Buckets {
		seen += c
		if 2*seen >= h.N && h.N > 0 {
			if i == len(latencyBucketsUs) {
				return -1
			}
			return latencyBucketsUs[i]
		}
	}
	return 0
}

// relayLatency is what the "latency" op answers: per direction, the time
// from a frame's kernel receive stamp to the relay's read of it (the
// relay's wake-up and the reads before it), and the time its write out of
// the other veth took (the kernel carrying the frame on, and whatever that
// triggers in the same softirq, e.g. the far side's reply).
type relayLatency struct {
	ReadDelay [2]latencyHist `json:"read_delay"`
	Write     [2]latencyHist `json:"write"`
	// Frames whose stamp is no receive time: more than maxReadDelay
	// before the read or after it. A TCP sender's frames can carry their
	// departure time (CLOCK_MONOTONIC, for pacing) across namespaces in
	// the same field.
	Foreign [2]uint64 `json:"foreign"`
}

// maxReadDelay bounds a stamp taken for a receive time.
const maxReadDelay = int64(1e9)

// addRead counts a frame read at now (CLOCK_REALTIME, ns) with stamp ts.
func (l *relayLatency) addRead(d int, ts, now int64) {
	if ts <= 0 {
		return
	}
	if delay := now - ts; delay >= 0 && delay <= maxReadDelay {
		l.ReadDelay[d].add(delay)
	} else {
		l.Foreign[d]++
	}
}

// rxStampNs is the frame's receive time (CLOCK_REALTIME, ns) from a
// read's control messages, 0 if there is none.
func rxStampNs(oob []byte) int64 {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
			return sec*1e9 + nsec
		}
	}
	return 0
}

func realNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &ts)
	return ts.Nano()
}
