package netem

import (
	"encoding/binary"
	"testing"
	"unsafe"

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
