package mosquitto

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"pslab/internal/driver"
	"pslab/internal/mqtt"
)

// $SYS topics the administration reads.
const (
	sysUptime   = "$SYS/broker/uptime" // published at every update
	sysStored   = "$SYS/broker/store/messages/count"
	sysRetained = "$SYS/broker/retained messages/count"
	sysSent     = "$SYS/broker/publish/messages/sent"
	sysDropped  = "$SYS/broker/publish/messages/dropped"
)

var sysTopics = []string{sysUptime, sysStored, sysRetained, sysSent, sysDropped}

// sysTree is pslab's view of one Mosquitto's $SYS counters: a
// subscription kept open for as long as the broker runs (mqtt.Watcher),
// which keeps the last value of each counter.
//
// Why one subscription for the broker's life, not one per reading:
// Mosquitto 2.0.11 (Debian's) publishes a $SYS counter only at an update
// where its value changed, retained with a 60 s message expiry
// (src/sys_tree.c, sys_tree__update: db__messages_easy_queue(..., retain
// 1, expiry 60); 2.0.16 dropped the expiry), and no option republishes
// them. A counter that stays put (publish/messages/dropped at 0) is gone
// from the broker a minute after its last change, and a fresh
// subscription never sees it. A subscription open since the broker's
// start sees every change; one opened on a broker pslab did not start
// sees what changed in the minute before, and a counter it has not seen
// has kept its value since it subscribed (its change over a case is 0;
// its value is not known).
//
// Updates: Mosquitto publishes $SYS/broker/uptime first at every update
// (every sys_interval+1 s: it counts strictly), then the counters that
// changed. It writes each PUBLISH to a connected subscriber as it queues
// it (lib/packet_mosq.c, packet__queue calls packet__write in the broker)
// and counts it in publish/messages/sent once written, so the uptime it
// has just sent this subscription makes publish/messages/sent change at
// every update: its PUBLISH closes the update. A reading waits for the
// first update that began after a barrier (mqtt.Watcher.Barrier: a
// PINGREQ answered after what the broker sent before it), so that every
// counter was taken after the reading was asked for.
type sysTree struct {
	w       *mqtt.Watcher
	barrier func(ctx context.Context, mark uint64) error // w.Barrier
	url     string

	mu        sync.Mutex
	refs      int // openSysTree less release
	conn      uint64
	vals      map[string]string // last payload of each topic on this connection
	n         int64             // PUBLISH received on this connection
	sentAdmin int64             // of them, those written before Mosquitto took the publish/messages/sent in vals
	open      bool              // an update began (its uptime arrived) and has not ended
	mark      uint64
	waiters   map[uint64]*sysWaiter // by barrier mark
	newConn   chan struct{}         // closed when a new connection opens
}

// sysWaiter is a reading waiting for its update.
type sysWaiter struct {
	armed    bool // its barrier was answered
	inUpdate bool // the first update after the barrier has begun
	done     chan sysReading
}

// sysReading is the counters at the end of one update.
type sysReading struct {
	conn      uint64 // the watch's connection: another one after the broker restarted or the connection broke
	vals      map[string]string
	sentAdmin int64 // PUBLISH to pslab's watch on conn that the publish/messages/sent in vals counts
}

// sysTrees are the open watches, one per broker URL (every driver of a
// broker shares it: a second watch's deliveries would count in the
// first's publish/messages/sent).
var sysTrees = struct {
	sync.Mutex
	m map[string]*sysTree
}{m: map[string]*sysTree{}}

// openSysTree returns the watch of the Mosquitto at ep, subscribing when
// there is none; release when done.
func openSysTree(ctx context.Context, ep driver.Endpoint) (*sysTree, error) {
	sysTrees.Lock()
	defer sysTrees.Unlock()
	if t := sysTrees.m[ep.URL]; t != nil {
		t.mu.Lock()
		t.refs++
		t.mu.Unlock()
		return t, nil
	}
	t := newSysTree(ep.URL)
	w, err := mqtt.NewWatcher(ctx, ep, mqtt.V311, sysTopics, t.on)
	if err != nil {
		return nil, fmt.Errorf("mosquitto $SYS: %w", err)
	}
	t.w, t.barrier = w, w.Barrier
	sysTrees.m[ep.URL] = t
	return t, nil
}

func newSysTree(url string) *sysTree {
	return &sysTree{url: url, refs: 1, vals: map[string]string{}, waiters: map[uint64]*sysWaiter{}, newConn: make(chan struct{})}
}

// release ends the watch once nothing uses it.
func (t *sysTree) release() error {
	sysTrees.Lock()
	t.mu.Lock()
	t.refs--
	last := t.refs == 0
	t.mu.Unlock()
	if last {
		delete(sysTrees.m, t.url)
	}
	sysTrees.Unlock()
	if last {
		return t.w.Close()
	}
	return nil
}

// on takes the watch's events, in the order Mosquitto sent them.
func (t *sysTree) on(e mqtt.WatchEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case e.New: // nothing seen before is known of this connection's broker
		t.conn, t.vals, t.n, t.sentAdmin, t.open = e.Conn, map[string]string{}, 0, 0, false
		t.waiters = map[uint64]*sysWaiter{} // they wait on newConn and ask again
		close(t.newConn)
		t.newConn = make(chan struct{})
	case e.Conn != t.conn:
	case e.Topic == "":
		if w := t.waiters[e.Mark]; w != nil {
			w.armed = true
		}
	default:
		update := e.Topic == sysUptime && !e.Retained
		if update {
			t.endUpdateLocked() // one whose publish/messages/sent did not change
			t.open = true
			for _, w := range t.waiters {
				w.inUpdate = w.inUpdate || w.armed
			}
		}
		if e.Topic == sysSent {
			// A retained copy was taken before this connection
			// subscribed: none of its PUBLISH are in it.
			t.sentAdmin = 0
			if !e.Retained {
				t.sentAdmin = t.n
			}
		}
		t.n++
		t.vals[e.Topic] = string(e.Payload)
		if e.Topic == sysSent && !e.Retained {
			t.endUpdateLocked()
		}
	}
}

// endUpdateLocked hands the update that ends to the readings waiting for
// it.
func (t *sysTree) endUpdateLocked() {
	if !t.open {
		return
	}
	t.open = false
	var r sysReading
	for mark, w := range t.waiters {
		if !w.inUpdate {
			continue
		}
		if r.vals == nil {
			r = sysReading{conn: t.conn, vals: make(map[string]string, len(t.vals)), sentAdmin: t.sentAdmin}
			for k, v := range t.vals {
				r.vals[k] = v
			}
		}
		w.done <- r
		delete(t.waiters, mark)
	}
}

// read waits for the first update Mosquitto begins after the call and
// returns the counters at its end; it fails when the watch has no
// connection within sysReconnect, or the update takes longer than wait.
func (t *sysTree) read(ctx context.Context, wait time.Duration) (sysReading, error) {
	for {
		t.mu.Lock()
		t.mark++
		mark, newConn, w := t.mark, t.newConn, &sysWaiter{done: make(chan sysReading, 1)}
		t.waiters[mark] = w
		t.mu.Unlock()
		bctx, cancel := context.WithTimeout(ctx, sysReconnect)
		err := t.barrier(bctx, mark)
		cancel()
		if err == nil {
			timer := time.NewTimer(wait)
			select {
			case r := <-w.done:
				timer.Stop()
				return r, nil
			case <-newConn: // the broker restarted or the connection broke: ask again
				timer.Stop()
				continue
			case <-timer.C:
				err = fmt.Errorf("no update of %s within %s", sysUptime, wait)
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		t.mu.Lock()
		delete(t.waiters, mark)
		t.mu.Unlock()
		return sysReading{}, err
	}
}

// sysReconnect bounds the wait for the watch's connection (a restarted
// broker's start, the reconnection's back-off).
const sysReconnect = 15 * time.Second

// counter is topic's value in r; seen is false when pslab's watch has not
// seen it on its connection (unchanged since it subscribed).
func (r sysReading) counter(topic string) (v int64, seen bool, err error) {
	s, ok := r.vals[topic]
	if !ok {
		return 0, false, nil
	}
	if v, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
		return 0, true, fmt.Errorf("%s = %q: %w", topic, s, err)
	}
	return v, true, nil
}

// unseen says why a counter's value is not known.
const unseen = "Mosquitto before 2.0.16 publishes a $SYS counter only when it changes, retained for 60 s, and it had not changed since pslab's watch subscribed, more than a minute after its last change"

// change is how much topic changed from base to now. A counter the watch
// has seen at neither did not change (0). A cumulative counter
// (publish/messages/*) starts again from 0 when the broker restarts, so
// its change across two connections of the watch is not known; a state's
// (store/messages/count) is the difference of its two values.
func change(base, now sysReading, topic string, cumulative bool) (int64, error) {
	b, bSeen, err := base.counter(topic)
	if err != nil {
		return 0, err
	}
	n, nSeen, err := now.counter(topic)
	if err != nil {
		return 0, err
	}
	switch {
	case base.conn != now.conn && (cumulative || !bSeen || !nSeen):
		return 0, fmt.Errorf("%s: pslab's $SYS watch connected again since the case began (the broker restarted, or the connection to it broke): its change over the case is not known", topic)
	case bSeen && nSeen:
		return n - b, nil
	case !bSeen && !nSeen:
		return 0, nil
	case nSeen:
		return 0, fmt.Errorf("%s: %d at the case's end, not known at its start (%s)", topic, n, unseen)
	}
	return 0, fmt.Errorf("%s: not known at the case's end (%s)", topic, unseen)
}
