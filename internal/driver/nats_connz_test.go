package driver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPendingMessagesCountsWholeFrames: pending bytes become whole MSG
// frames of the connection's mean payload, subject and sid; a frame
// partly written counts as not held.
func TestPendingMessagesCountsWholeFrames(t *testing.T) {
	subject := "pabcdefg.t0" // 11 bytes
	// "MSG pabcdefg.t0 1 5120\r\n" + 5120 + "\r\n" = 24 + 5122 = 5146
	frame := int64(len("MSG "+subject+" 1 5120\r\n") + 5120 + 2)
	require.Equal(t, int64(5146), frame)
	cn := connzConn{OutMsgs: 10, OutBytes: 10 * 5120, NumSubs: 1, Subs: []string{subject}}
	for _, tc := range []struct {
		pending, want int64
	}{{0, 0}, {frame - 1, 0}, {frame, 1}, {7*frame + frame/2, 7}} {
		cn.Pending = tc.pending
		assert.Equal(t, tc.want, cn.pendingMessages(5120), "pending %d bytes", tc.pending)
	}
	// Before anything was sent the case's size stands for the payload.
	fresh := connzConn{Pending: 3 * frame, NumSubs: 1, Subs: []string{subject}}
	assert.Equal(t, int64(3), fresh.pendingMessages(5120))
	// Selector subscriptions: the longest subject and a two-digit sid.
	var subs []string
	for v := range 20 {
		subs = append(subs, "pabcdefg.t0.s"+strconv.Itoa(v)) // up to 15 bytes
	}
	sel := connzConn{OutMsgs: 1, OutBytes: 100, NumSubs: 20, Subs: subs}
	selFrame := int64(len("MSG pabcdefg.t0.s19 20 100\r\n") + 100 + 2)
	sel.Pending = 50 * selFrame
	assert.Equal(t, int64(50), sel.pendingMessages(100))
}

// TestCoreHeldReadsTheCaseConnections: coreHeld sums, page by page, the
// pending messages of the case's own subscriber connections and of no
// other (another case's subscribers, its publishers).
func TestCoreHeldReadsTheCaseConnections(t *testing.T) {
	c := CaseSpec{Prefix: "pslab-test-c01-r1", Factors: baseFactors()}
	other := CaseSpec{Prefix: "pslab-test-c02-r1", Factors: baseFactors()}
	subj := subject(c.Prefix, 0, -1)
	frame := int64(len("MSG "+subj+" 1 100\r\n") + 100 + 2)
	conn := func(name string, frames int64) connzConn {
		return connzConn{Name: name, Pending: frames * frame, OutMsgs: 5, OutBytes: 500, NumSubs: 1, Subs: []string{subj}}
	}
	var conns []connzConn
	var want int64
	for i := range 5 {
		conns = append(conns, conn(subscriberConnName(c, i), int64(10*i)))
		want += int64(10 * i)
	}
	conns = append(conns, conn(subscriberConnName(other, 0), 1000), conn("pslab-pub-0", 1000), conn("pslab-admin", 1000))
	pages := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/connz", r.URL.Path)
		pages++
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		end := min(off+3, len(conns)) // the server's own page size here: 3
		_ = json.NewEncoder(w).Encode(map[string]any{"total": len(conns), "connections": conns[off:end]})
	}))
	defer srv.Close()
	h, err := coreHeld(context.Background(), Endpoint{MonitorURL: srv.URL}, c)
	require.NoError(t, err)
	assert.Equal(t, want, h.Backlog)
	assert.Equal(t, 3, pages, "8 connections in pages of 3")
	assert.Contains(t, h.Source, "pending_bytes")

	srv.Close()
	_, err = coreHeld(context.Background(), Endpoint{MonitorURL: srv.URL}, c)
	assert.Error(t, err, "an unreachable monitoring endpoint is an error, not zero held")
}
