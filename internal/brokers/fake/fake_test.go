package fake_test

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/brokers/fake"
	"pslab/internal/driver"
	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
)

// The fake's own tests: what each knob and each kind of subscription does,
// counted exactly (the load engine's tests rely on it).

// sink collects the sequence numbers delivered to one subscriber, in
// order.
type sink struct {
	mu   sync.Mutex
	seqs []uint64
	re   int
}

func (s *sink) handle(d driver.Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seqs = append(s.seqs, binary.BigEndian.Uint64(d.Body))
	if d.Redelivered {
		s.re++
	}
}

func (s *sink) got() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]uint64(nil), s.seqs...)
}

// redelivered is how many deliveries were flagged redelivered.
func (s *sink) redelivered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.re
}

func (s *sink) waitLen(t *testing.T, n int) []uint64 {
	t.Helper()
	drivertest.WaitFor(t, 5*time.Second, "deliveries", func() bool { return len(s.got()) >= n })
	time.Sleep(20 * time.Millisecond) // nothing more should come
	return s.got()
}

func body(seq uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, seq)
	return b
}

// publish sends seqs from..to on topic with filtered value sel, flushed.
func publish(t *testing.T, p driver.Publisher, from, to uint64, topic, sel int) {
	t.Helper()
	for s := from; s <= to; s++ {
		require.NoError(t, p.Publish(context.Background(), driver.Message{Body: body(s), Sel: sel, Topic: topic}))
	}
	require.NoError(t, p.Flush(context.Background()))
}

func setup(t *testing.T, k fake.Knobs, f scenario.Factors) (*fake.Driver, driver.CaseSpec) {
	return fake.Open(k), driver.CaseSpec{Prefix: drivertest.TestPrefix(), Factors: f}
}

func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func TestFakeRoutesByTopicAndSelector(t *testing.T) {
	f := drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
	f.Topics, f.TopicRoundRobin = 2, true
	d, cs := setup(t, fake.Knobs{}, f)
	var t0, t1 sink
	ctx := context.Background()
	_, err := d.Subscriber(ctx, driver.SubSpec{Case: cs, Topic: 0}, t0.handle)
	require.NoError(t, err)
	_, err = d.Subscriber(ctx, driver.SubSpec{Case: cs, ID: 1, Topic: 1}, t1.handle)
	require.NoError(t, err)
	p, err := d.Publisher(ctx, driver.PubSpec{Case: cs})
	require.NoError(t, err)
	publish(t, p, 1, 3, 0, -1)
	publish(t, p, 4, 5, 1, -1)
	assert.Equal(t, seqRange(1, 3), t0.waitLen(t, 3), "topic 0 only")
	assert.Equal(t, seqRange(4, 5), t1.waitLen(t, 2), "topic 1 only")

	g := drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
	g.Selector = true
	d, cs = setup(t, fake.Knobs{}, g)
	var sel sink
	_, err = d.Subscriber(ctx, driver.SubSpec{Case: cs, SelectFrom: 10, SelectTo: 20}, sel.handle)
	require.NoError(t, err)
	p, err = d.Publisher(ctx, driver.PubSpec{Case: cs})
	require.NoError(t, err)
	publish(t, p, 1, 1, 0, 9)
	publish(t, p, 2, 2, 0, 10)
	publish(t, p, 3, 3, 0, 19)
	publish(t, p, 4, 4, 0, 20)
	assert.Equal(t, []uint64{2, 3}, sel.waitLen(t, 2), "the selector's range, upper bound excluded")
	assert.Equal(t, int64(2), d.Stats().Routed)
}

func TestFakeDurableKeepsWhatArrivesWhileAway(t *testing.T) {
	d, cs := setup(t, fake.Knobs{}, drivertest.Factors(scenario.Durable, scenario.Persistent))
	ctx := context.Background()
	spec := driver.SubSpec{Case: cs, DurableName: "d", ClientID: "c"}
	var first sink
	s, err := d.Subscriber(ctx, spec, first.handle)
	require.NoError(t, err)
	p, err := d.Publisher(ctx, driver.PubSpec{Case: cs})
	require.NoError(t, err)
	publish(t, p, 1, 3, 0, -1)
	first.waitLen(t, 3)
	require.NoError(t, s.Close())
	publish(t, p, 4, 7, 0, -1)
	var again sink
	_, err = d.Subscriber(ctx, spec, again.handle)
	require.NoError(t, err)
	assert.Equal(t, seqRange(4, 7), again.waitLen(t, 4), "the backlog of the time away, in order")
	assert.Equal(t, int64(4), d.Stats().HeldAway)

	// A non-durable subscription's queue goes with its subscriber: what a
	// slow one had not taken when it left is discarded.
	d, cs = setup(t, fake.Knobs{SlowSubscribers: 1, SlowDelay: 50 * time.Millisecond}, drivertest.Factors(scenario.NonDurable, scenario.NonPersistent))
	var slow sink
	s, err = d.Subscriber(ctx, driver.SubSpec{Case: cs}, slow.handle)
	require.NoError(t, err)
	p, err = d.Publisher(ctx, driver.PubSpec{Case: cs})
	require.NoError(t, err)
	publish(t, p, 1, 20, 0, -1)
	require.NoError(t, s.Close())
	st := d.Stats()
	assert.Equal(t, int64(20), st.Routed)
	assert.Equal(t, st.Routed, st.Discarded+int64(len(slow.got())), "each message was delivered or discarded")
	assert.Positive(t, st.Discarded)
}

func TestFakeKnobsDropDuplicateReorderRefuse(t *testing.T) {
	ctx := context.Background()
	f := drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
	for _, c := range []struct {
		name  string
		k     fake.Knobs
		sent  uint64
		want  []uint64
		stats fake.Stats
	}{
		{"drop every 3rd", fake.Knobs{DropEvery: 3}, 9, []uint64{1, 2, 4, 5, 7, 8}, fake.Stats{Routed: 9, Dropped: 3, Published: 9}},
		{"duplicate every 2nd", fake.Knobs{DuplicateEvery: 2}, 4, []uint64{1, 2, 2, 3, 4, 4}, fake.Stats{Routed: 4, Duplicated: 2, Published: 4}},
		{"reorder every 2nd", fake.Knobs{ReorderEvery: 2}, 5, []uint64{1, 3, 2, 5, 4}, fake.Stats{Routed: 5, Reordered: 2, Published: 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, cs := setup(t, c.k, f)
			var s sink
			_, err := d.Subscriber(ctx, driver.SubSpec{Case: cs}, s.handle)
			require.NoError(t, err)
			p, err := d.Publisher(ctx, driver.PubSpec{Case: cs})
			require.NoError(t, err)
			publish(t, p, 1, c.sent, 0, -1)
			assert.Equal(t, c.want, s.waitLen(t, len(c.want)))
			assert.Equal(t, c.stats, d.Stats())
		})
	}
	d, cs := setup(t, fake.Knobs{FailPublishAfter: 2}, f)
	p, err := d.Publisher(ctx, driver.PubSpec{Case: cs})
	require.NoError(t, err)
	require.NoError(t, p.Publish(ctx, driver.Message{Body: body(1), Sel: -1}))
	require.NoError(t, p.Publish(ctx, driver.Message{Body: body(2), Sel: -1}))
	assert.ErrorContains(t, p.Publish(ctx, driver.Message{Body: body(3), Sel: -1}), "refused")
	assert.Equal(t, fake.Stats{Published: 2, Refused: 1}, d.Stats())
}

// TestFakeLazyAcksRedeliver: a CLIENT-ack durable subscriber that leaves
// before its cumulative acknowledgement gets what it had not acknowledged
// again, flagged redelivered.
func TestFakeLazyAcksRedeliver(t *testing.T) {
	f := drivertest.Factors(scenario.Durable, scenario.Persistent)
	f.Ack = scenario.AckClient
	d, cs := setup(t, fake.Knobs{}, f)
	ctx := context.Background()
	spec := driver.SubSpec{Case: cs, DurableName: "d", ClientID: "c", AckEvery: 10}
	var first sink
	s, err := d.Subscriber(ctx, spec, first.handle)
	require.NoError(t, err)
	p, err := d.Publisher(ctx, driver.PubSpec{Case: cs})
	require.NoError(t, err)
	publish(t, p, 1, 13, 0, -1) // 10 acknowledged at once, 3 not yet
	first.waitLen(t, 13)
	require.NoError(t, s.Close())
	var again sink
	_, err = d.Subscriber(ctx, spec, again.handle)
	require.NoError(t, err)
	assert.Equal(t, seqRange(11, 13), again.waitLen(t, 3))
	assert.Equal(t, 3, again.redelivered(), "flagged redelivered")
	assert.Equal(t, int64(3), d.Stats().Redelivered)
}

// TestFakeDescriptor: the fake is registered, simulated, and its driver
// is found by the URL its broker started at, nowhere else.
func TestFakeDescriptor(t *testing.T) {
	desc, ok := brokers.Lookup(fake.Name)
	require.True(t, ok, "registered by the package's init")
	assert.True(t, desc.Simulated)
	ctx := context.Background()
	b, err := desc.NewBroker(ctx, "x", nil)
	require.NoError(t, err)
	ep, err := b.Start(ctx, broker.LoopbackHost{})
	require.NoError(t, err)
	d, err := desc.NewDriver(ctx, ep)
	require.NoError(t, err)
	assert.Equal(t, fake.Name, d.Name())
	require.NoError(t, b.Stop(ctx))
	_, err = desc.NewDriver(ctx, ep)
	assert.ErrorContains(t, err, "no running fake broker")
	assert.ErrorIs(t, desc.Supports(scenario.Factors{}), driver.ErrUnsupported)
}
