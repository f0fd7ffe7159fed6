package netem

import (
	"encoding/binary"
	"os"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestLatencyHist(t *testing.T) {
	var h latencyHist
	require.Zero(t, h.MeanUs())
	require.Zero(t, h.MedianUs())
	for _, us := range []int64{3, 4, 15, 150, 2000} {
		h.add(us * 1000)
	}
	h.add(-5) // a receive stamp after the read (clock steps): counted as 0
	require.EqualValues(t, 6, h.N)
	require.InDelta(t, (3+4+15+150+2000)/6.0, h.MeanUs(), 1e-9)
	require.EqualValues(t, 2000_000, h.MaxNs)
	require.Equal(t, []uint64{3, 0, 1, 0, 0, 1, 0, 0, 1}, h.Buckets)
	require.EqualValues(t, 5, h.MedianUs()) // 3 of 6 at or under 5 us
	h.add(3000_000)
	h.add(4000_000)
	require.EqualValues(t, 20, h.MedianUs()) // 4 of 8 at or under 20 us
	var over latencyHist
	over.add(5_000_000)
	require.EqualValues(t, -1, over.MedianUs()) // above every bound
}

func TestLatencyReadStamps(t *testing.T) {
	var l relayLatency
	now := int64(1_800_000_000) * 1e9
	l.addRead(0, now-150_000, now)   // 150 us before the read
	l.addRead(0, 0, now)             // no stamp: nothing
	l.addRead(1, 35_000*1e9, now)    // a monotonic departure time: foreign
	l.addRead(1, now+5_000_000, now) // after the read: foreign
	require.EqualValues(t, 1, l.ReadDelay[0].N)
	require.EqualValues(t, 150_000, l.ReadDelay[0].SumNs)
	require.Zero(t, l.ReadDelay[1].N)
	require.Equal(t, [2]uint64{0, 2}, l.Foreign)
}

func TestRxStampFromControlMessage(t *testing.T) {
	oob := make([]byte, unix.CmsgSpace(16))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SO_TIMESTAMPNS
	h.SetLen(unix.CmsgLen(16))
	data := oob[unix.CmsgLen(0):]
	binary.NativeEndian.PutUint64(data[0:], 1_700_000_000)
	binary.NativeEndian.PutUint64(data[8:], 123_456_789)
	require.EqualValues(t, int64(1_700_000_000)*1e9+123_456_789, rxStampNs(oob))
	h.Type = unix.SO_TIMESTAMP // another message: no stamp
	require.Zero(t, rxStampNs(oob))
	require.Zero(t, rxStampNs(nil))
	require.Zero(t, rxStampNs(oob[:3])) // truncated
}

// TestRelayLatencyDiagnostic: with PSLAB_RELAY_LATENCY=1 the relay times
// every frame it reads (from the kernel's receive stamp) and every write,
// the latency op hands the counts over and resets them; without it the
// relay times nothing.
func TestRelayLatencyDiagnostic(t *testing.T) {
	requireRoot(t)
	l := New(Options{Prefix: testPrefix})
	require.NoError(t, l.Up(t.Context()))
	defer l.Down()
	p := Profile{Name: "relay-latency", RateKbit: 10_000, Duplex: DuplexFull, Backend: string(BackendRelay)}
	for _, on := range []bool{true, false} {
		if on {
			t.Setenv(relayLatencyEnv, "1")
		} else {
			require.NoError(t, os.Unsetenv(relayLatencyEnv))
		}
		_, err := l.Apply(p)
		require.NoError(t, err)
		rtt, err := l.pingPhase(t.Context(), p, time.Second)
		require.NoError(t, err)
		require.Positive(t, rtt.Received)
		st, _, err := queryRelay(l.n.Relay, relayRequest{Op: "latency"})
		require.NoError(t, err)
		lat := st.Latency
		require.NotNil(t, lat)
		for d := range 2 {
			if !on {
				assert.Zero(t, lat.ReadDelay[d].N, "no timing unless asked")
				assert.Zero(t, lat.Write[d].N)
				continue
			}
			// Every request and reply was read and written once (ARP
			// is the router kernel's, not the relay's).
			assert.GreaterOrEqual(t, lat.ReadDelay[d].N, uint64(rtt.Received), "direction %d: stamped reads", d)
			assert.GreaterOrEqual(t, lat.Write[d].N, uint64(rtt.Received), "direction %d: timed writes", d)
			assert.Equal(t, lat.ReadDelay[d].N, sum(lat.ReadDelay[d].Buckets))
		}
		again, _, err := queryRelay(l.n.Relay, relayRequest{Op: "latency"})
		require.NoError(t, err)
		assert.Zero(t, again.Latency.ReadDelay[0].N+again.Latency.ReadDelay[1].N, "the op resets")
	}
}

func sum(v []uint64) (s uint64) {
	for _, x := range v {
		s += x
	}
	return s
}
