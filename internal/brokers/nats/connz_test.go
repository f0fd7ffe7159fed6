package nats

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
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
		assert.Equal(t, tc.want, cn.messagesIn(cn.Pending, 5120), "pending %d bytes", tc.pending)
	}
	// Before anything was sent the case's size stands for the payload.
	fresh := connzConn{Pending: 3 * frame, NumSubs: 1, Subs: []string{subject}}
	assert.Equal(t, int64(3), fresh.messagesIn(fresh.Pending, 5120))
	// Selector subscriptions: the longest subject and a two-digit sid.
	var subs []string
	for v := range 20 {
		subs = append(subs, "pabcdefg.t0.s"+strconv.Itoa(v)) // up to 15 bytes
	}
	sel := connzConn{OutMsgs: 1, OutBytes: 100, NumSubs: 20, Subs: subs}
	selFrame := int64(len("MSG pabcdefg.t0.s19 20 100\r\n") + 100 + 2)
	sel.Pending = 50 * selFrame
	assert.Equal(t, int64(50), sel.messagesIn(sel.Pending, 100))
}

// TestCoreHeldReadsTheCaseConnections: coreHeld reads /connz page by page
// and counts, for each of the case's own subscriber connections (no other
// case's, no publisher's), what the server queued less what its client
// parsed; only the newest connection of a name (an older one was lost);
// and only the output buffer of a connection without a known client. A
// subscriber whose newest connection is closed (state=closed; also one
// still listed as open while the server tears it down) holds nothing:
// counted in ClosedByServer with its reason, its counts in Queued and
// Parsed. A closed connection its client replaced counts in
// ReplacedReasons.
func TestCoreHeldReadsTheCaseConnections(t *testing.T) {
	c := driver.CaseSpec{Prefix: "pslab-test-c01-r1", Factors: drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)}
	other := driver.CaseSpec{Prefix: "pslab-test-c02-r1", Factors: drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)}
	subj := subject(c.Prefix, 0, -1)
	frame := int64(len("MSG "+subj+" 1 100\r\n") + 100 + 2)
	conn := func(cid uint64, name string, queued, frames int64) connzConn {
		return connzConn{CID: cid, Name: name, Pending: frames * frame, OutMsgs: queued, OutBytes: 100 * queued, NumSubs: 1, Subs: []string{subj}}
	}
	parsedBy := map[string]uint64{}
	var conns []connzConn
	for i := range 4 {
		// queued 100+i, parsed 100-10i: 11i on their way, 10i of them in
		// the output buffer
		name := subscriberConnName(c, i)
		conns = append(conns, conn(uint64(10+i), name, int64(100+i), int64(10*i)))
		parsedBy[name] = uint64(100 - 10*i)
	}
	conns = append(conns,
		conn(14, subscriberConnName(c, 4), 500, 40),   // no known client: its 40 buffered only
		conn(1, subscriberConnName(c, 0), 5000, 1000), // c's subscriber 0 before a reconnect
		conn(20, subscriberConnName(other, 0), 1000, 1000), conn(21, "pslab-pub-0", 1000, 1000), conn(22, "pslab-admin", 1000, 1000))
	parsedBy[subscriberConnName(c, 5)] = 250
	closedConn := func(cn connzConn, reason string) connzConn { cn.Reason = reason; return cn }
	closed := []connzConn{
		closedConn(conn(2, subscriberConnName(c, 1), 50, 0), "Stale Connection"),                 // older than subscriber 1's open one
		closedConn(conn(13, subscriberConnName(c, 3), 103, 30), "Stale Connection"),              // subscriber 3's open one, being torn down
		closedConn(conn(15, subscriberConnName(c, 5), 300, 0), "Slow Consumer (Write Deadline)"), // subscriber 5: closed, not noticed yet
		closedConn(conn(23, subscriberConnName(other, 1), 300, 0), "Stale Connection"),           // another case's
	}
	parsed := func(name string) (uint64, bool) { n, ok := parsedBy[name]; return n, ok }
	pages := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/connz", r.URL.Path)
		list := conns
		if r.URL.Query().Get("state") == "closed" {
			list = closed
		} else {
			pages++
		}
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		end := min(off+3, len(list)) // the server's own page size here: 3
		_ = json.NewEncoder(w).Encode(map[string]any{"total": len(list), "connections": list[off:end]})
	}))
	defer srv.Close()
	h, err := coreHeld(context.Background(), driver.Endpoint{MonitorURL: srv.URL}, c, parsed)
	require.NoError(t, err)
	assert.Equal(t, int64(11*(0+1+2)+40), h.Backlog, "subscriber 3's connection is closed: nothing of it on its way")
	assert.Equal(t, int64(0+1+2), h.InSockets, "what is on its way beyond the output buffers")
	assert.Equal(t, int64(100+101+102+103+300), h.Queued, "the known connections' queued, closed ones too")
	assert.Equal(t, int64(100+90+80+70+250), h.Parsed)
	assert.Equal(t, 2, h.ClosedByServer)
	assert.Equal(t, map[string]int{"Stale Connection": 1, "Slow Consumer (Write Deadline)": 1}, h.ClosedReasons)
	assert.Equal(t, map[string]int{"Stale Connection": 1}, h.ReplacedReasons, "subscriber 1's older connection, which its client replaced; not another case's")
	assert.Equal(t, 3, pages, "9 open connections in pages of 3")
	assert.Contains(t, h.Source, "out_msgs")
	assert.Contains(t, h.Source, "1 connection(s) without an open subscriber")

	srv.Close()
	_, err = coreHeld(context.Background(), driver.Endpoint{MonitorURL: srv.URL}, c, parsed)
	assert.Error(t, err, "an unreachable monitoring endpoint is an error, not zero held")
}
