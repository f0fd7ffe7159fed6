package mosquitto

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/mqtt"
)

// Hermetic: the $SYS watch fed the events Mosquitto 2.0.11 sends.

// fakeSys is a sysTree whose barriers the test answers.
type fakeSys struct {
	*sysTree
	marks chan uint64
	conn  uint64
}

func newFakeSys() *fakeSys {
	f := &fakeSys{sysTree: newSysTree("mqtt://test"), marks: make(chan uint64, 8)}
	f.barrier = func(_ context.Context, mark uint64) error { f.marks <- mark; return nil }
	f.connect()
	return f
}

func (f *fakeSys) connect() {
	f.conn++
	f.on(mqtt.WatchEvent{Conn: f.conn, New: true})
}

func (f *fakeSys) pub(topic string, v int64, retained bool) {
	f.on(mqtt.WatchEvent{Conn: f.conn, Topic: topic, Payload: []byte(strconv.FormatInt(v, 10)), Retained: retained})
}

// update is one $SYS update: uptime, then the counters that changed,
// publish/messages/sent last (as sys_tree__update orders them).
func (f *fakeSys) update(changed map[string]int64, sent int64) {
	f.pub(sysUptime, 1, false)
	for _, topic := range []string{sysStored, sysRetained, sysDropped} {
		if v, ok := changed[topic]; ok {
			f.pub(topic, v, false)
		}
	}
	f.pub(sysSent, sent, false)
}

// reading starts a read and returns its result channel once its barrier
// is out, and the barrier's mark.
func (f *fakeSys) reading(t *testing.T) (<-chan sysReading, uint64) {
	t.Helper()
	out := make(chan sysReading, 1)
	go func() {
		r, err := f.read(context.Background(), 10*time.Second)
		assert.NoError(t, err)
		out <- r
	}()
	select {
	case mark := <-f.marks:
		return out, mark
	case <-time.After(10 * time.Second):
		t.Fatal("no barrier")
	}
	return nil, 0
}

func (f *fakeSys) answer(mark uint64) { f.on(mqtt.WatchEvent{Conn: f.conn, Mark: mark}) }

func value(t *testing.T, r sysReading, topic string) int64 {
	t.Helper()
	v, seen, err := r.counter(topic)
	require.NoError(t, err)
	require.True(t, seen, topic)
	return v
}

// TestSysWatchKeepsCountersThatStopChanging: the counters Mosquitto
// published once (retained at the subscription, or at an update) keep
// their last value through updates that no longer carry them, which is
// what a fresh subscription misses once their 60 s expiry has passed.
func TestSysWatchKeepsCountersThatStopChanging(t *testing.T) {
	f := newFakeSys()
	f.pub(sysStored, 40, true)
	f.pub(sysRetained, 38, true)
	f.pub(sysDropped, 0, true)
	f.pub(sysSent, 500, true)
	f.update(map[string]int64{sysStored: 41}, 510)
	for i := 0; i < 40; i++ { // minutes of updates with nothing but uptime and sent
		f.update(nil, 520+int64(i))
	}
	out, mark := f.reading(t)
	f.answer(mark)
	f.update(nil, 600)
	r := <-out
	assert.EqualValues(t, 41, value(t, r, sysStored))
	assert.EqualValues(t, 38, value(t, r, sysRetained))
	assert.EqualValues(t, 0, value(t, r, sysDropped))
	assert.EqualValues(t, 600, value(t, r, sysSent))
}

// TestSysReadingWaitsForAnUpdateAfterItsBarrier: an update under way when
// the barrier is answered was taken before it; the reading is the next
// one's.
func TestSysReadingWaitsForAnUpdateAfterItsBarrier(t *testing.T) {
	f := newFakeSys()
	f.update(map[string]int64{sysStored: 1, sysRetained: 1, sysDropped: 0}, 10)
	out, mark := f.reading(t)
	f.pub(sysUptime, 2, false) // the update began before the barrier was answered
	f.answer(mark)
	f.pub(sysStored, 5, false)
	f.pub(sysSent, 20, false)
	select {
	case r := <-out:
		t.Fatalf("read the update begun before its barrier: %v", r.vals)
	case <-time.After(50 * time.Millisecond):
	}
	f.update(map[string]int64{sysStored: 7}, 30)
	r := <-out
	assert.EqualValues(t, 7, value(t, r, sysStored))
	assert.EqualValues(t, 30, value(t, r, sysSent))

	// An update whose publish/messages/sent did not change ends at the
	// next uptime.
	out, mark = f.reading(t)
	f.answer(mark)
	f.pub(sysUptime, 3, false)
	f.pub(sysStored, 9, false)
	f.update(nil, 40)
	r = <-out
	assert.EqualValues(t, 9, value(t, r, sysStored))
	assert.EqualValues(t, 30, value(t, r, sysSent), "the update before the one ending in sent 40")
}

// TestSysSentLessTheWatchsOwn: publish/messages/sent counts the PUBLISH
// Mosquitto wrote before it took the value, the watch's own among them:
// every $SYS message the watch received before it, none for a retained
// copy (taken before the watch subscribed).
func TestSysSentLessTheWatchsOwn(t *testing.T) {
	f := newFakeSys()
	f.pub(sysUptime, 1, true)
	f.pub(sysDropped, 0, true)
	f.pub(sysSent, 100, true)
	out, mark := f.reading(t)
	f.answer(mark)
	f.update(map[string]int64{sysStored: 3}, 103) // before its sent: the 3 retained copies, this update's uptime and store count
	base := <-out
	assert.EqualValues(t, 5, base.sentAdmin)
	out, mark = f.reading(t)
	f.answer(mark)
	f.update(nil, 120) // since: the sent of the update before, this update's uptime
	now := <-out
	assert.EqualValues(t, 7, now.sentAdmin)
	d, err := change(base, now, sysSent, true)
	require.NoError(t, err)
	assert.EqualValues(t, 15, d-(now.sentAdmin-base.sentAdmin), "17 sent, 2 of them to the watch")
}

// TestSysChangeOfCountersNotSeen: a counter the watch has not seen at
// either end did not change; one seen only at the end has an unknown
// start; a cumulative counter across a reconnection (the broker may have
// restarted) is not known; a reconnection asks again.
func TestSysChangeOfCountersNotSeen(t *testing.T) {
	f := newFakeSys()
	out, mark := f.reading(t)
	f.answer(mark)
	f.update(nil, 10)
	base := <-out
	out, mark = f.reading(t)
	f.answer(mark)
	f.update(map[string]int64{sysDropped: 4}, 20)
	now := <-out

	d, err := change(base, now, sysStored, false)
	require.NoError(t, err)
	assert.Zero(t, d, "unchanged since the watch subscribed")
	_, err = change(base, now, sysDropped, true)
	assert.ErrorContains(t, err, "not known at its start")

	out, mark = f.reading(t)
	f.connect() // the broker restarted: the reading asks again
	f.answer(mark)
	mark = <-f.marks
	f.pub(sysStored, 2, true)
	f.answer(mark)
	f.update(map[string]int64{sysRetained: 1}, 3)
	after := <-out
	assert.NotEqual(t, now.conn, after.conn)
	_, err = change(now, after, sysSent, true)
	assert.ErrorContains(t, err, "connected again")
	_, err = change(now, after, sysStored, false)
	assert.ErrorContains(t, err, "connected again", "not seen before the reconnection")
}
