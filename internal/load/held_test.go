package load

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// holdingDriver is an in-memory broker for the accounting tests: it hands
// each subscriber the first deliverUpTo messages of its topic at once and
// then, per mode, holds the rest (a backlog it reports as a HeldReporter)
// or drops them (a loss it does not hold).
type holdingDriver struct {
	deliverUpTo int64
	drop        bool
	// flushDelay > 0: a publisher's sends reach the broker only when its
	// Flush has waited flushDelay (they sat in its socket, crossing a slow
	// link); a Flush cancelled before that leaves them unsent.
	flushDelay time.Duration
	// unreceived: publishers say how many of their sends have not
	// reached the broker (driver.UnreceivedReporter).
	unreceived bool
	// routed: the broker says how many deliveries it routed to the
	// subscribers (driver.Held.Routed).
	routed bool
	// subOutage, when set, is the cause of one outage each subscriber
	// reports (driver.ConnReporter).
	subOutage string
	// pubInDoubt: each publisher reports this many sends in doubt
	// (driver.ConnReporter).
	pubInDoubt int64

	mu      sync.Mutex
	subs    []*holdingSub
	held    atomic.Int64
	routedN atomic.Int64
}

type holdingSub struct {
	topic     int
	h         driver.Handler
	delivered atomic.Int64
}

func (d *holdingDriver) Name() string                                   { return "holding" }
func (d *holdingDriver) Supports(scenario.Factors) error                { return nil }
func (d *holdingDriver) Mechanism(scenario.Factors) string              { return "in-memory test broker" }
func (d *holdingDriver) Prepare(context.Context, driver.CaseSpec) error { return nil }
func (d *holdingDriver) Purge(context.Context, string) error            { return nil }
func (d *holdingDriver) Close() error                                   { return nil }

func (d *holdingDriver) Publisher(_ context.Context, s driver.PubSpec) (driver.Publisher, error) {
	p := &holdingPub{d: d, spec: s}
	switch {
	case d.unreceived:
		return reportingPub{p}, nil
	case d.pubInDoubt > 0:
		return doubtPub{p}, nil
	}
	return p, nil
}

func (d *holdingDriver) Subscriber(_ context.Context, s driver.SubSpec, h driver.Handler) (driver.Subscriber, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.subs = append(d.subs, &holdingSub{topic: s.Topic, h: h})
	if d.subOutage != "" {
		return outageConn{driver.ConnStats{Outages: []driver.Outage{{Lost: time.Now(), Cause: d.subOutage}}}}, nil
	}
	return holdingConn{}, nil
}

// route delivers m to each subscriber of its topic, or holds or drops it.
func (d *holdingDriver) route(topic int, body []byte) {
	d.mu.Lock()
	subs := d.subs
	d.mu.Unlock()
	for _, s := range subs {
		if s.topic != topic {
			continue
		}
		d.routedN.Add(1)
		switch {
		case s.delivered.Add(1) <= d.deliverUpTo:
			s.h(driver.Delivery{Body: body})
		case !d.drop:
			d.held.Add(1)
		}
	}
}

type holdingPub struct {
	d       *holdingDriver
	spec    driver.PubSpec
	pending []driver.Message // not yet at the broker (flushDelay > 0)
}

func (p *holdingPub) Publish(_ context.Context, m driver.Message) error {
	if p.d.flushDelay > 0 {
		m.Body = append([]byte(nil), m.Body...)
		p.pending = append(p.pending, m)
		return nil
	}
	p.d.route(driver.MessageTopic(p.spec, m), m.Body)
	return nil
}

func (p *holdingPub) Flush(ctx context.Context) error {
	if len(p.pending) == 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(p.d.flushDelay):
	}
	for _, m := range p.pending {
		p.d.route(driver.MessageTopic(p.spec, m), m.Body)
	}
	p.pending = nil
	return nil
}

func (p *holdingPub) Close() error { return nil }

// reportingPub says how many of its sends have not reached the broker.
type reportingPub struct{ *holdingPub }

func (p reportingPub) Unreceived(context.Context) (int64, error) { return int64(len(p.pending)), nil }

// doubtPub reports sends in doubt (ConnReporter).
type doubtPub struct{ *holdingPub }

func (p doubtPub) ConnStats() driver.ConnStats { return driver.ConnStats{InDoubt: p.d.pubInDoubt} }

type holdingConn struct{}

func (holdingConn) Close() error       { return nil }
func (holdingConn) Unsubscribe() error { return nil }

// outageConn is a subscriber that reports outages.
type outageConn struct{ st driver.ConnStats }

func (outageConn) Close() error                  { return nil }
func (outageConn) Unsubscribe() error            { return nil }
func (c outageConn) ConnStats() driver.ConnStats { return c.st }

// reportingDriver adds the broker's own count of what it holds.
type reportingDriver struct{ *holdingDriver }

func (d reportingDriver) Held(context.Context, driver.CaseSpec) (driver.Held, error) {
	h := driver.Held{Backlog: d.held.Load(), Source: "test broker"}
	if d.routed {
		n := d.routedN.Load()
		h.Routed = &n
	}
	return h, nil
}

func heldCase() scenario.Case {
	c := quickCase(scenario.Durable, scenario.Persistent)
	c.Publishers, c.Subscribers, c.Topics = 2, 4, 2
	c.Model = scenario.OneToOne
	c.Rate = 2000
	// No warm-up: it is not extended (the delivery rate of these brokers
	// never levels off), which keeps the test short.
	c.Warmup, c.Drain = 0, 100*time.Millisecond
	return c
}

// TestAccountingTellsBacklogFromLoss runs a case whose broker stops
// delivering after 300 messages per subscriber: a broker that holds the
// rest and says so gives lost 0 and the backlog; one that drops them
// gives them lost; one that cannot be asked leaves them unverified.
func TestAccountingTellsBacklogFromLoss(t *testing.T) {
	for _, tc := range []struct {
		name   string
		drop   bool
		report bool
	}{{"held-and-reported", false, true}, {"dropped", true, true}, {"held-not-reported", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			hd := &holdingDriver{deliverUpTo: 300, drop: tc.drop}
			var d driver.Driver = hd
			if tc.report {
				d = reportingDriver{hd}
			}
			res, err := Run(context.Background(), Config{Case: heldCase(), Prefix: "pslab-test-held", Driver: d, Seed: 5})
			require.NoError(t, err)
			n, a := res.Counts, res.Accounting
			require.NotNil(t, a)
			t.Logf("expected %d received %d backlog %d lost %d; drain %s after %.2f s", n.Expected, n.Received, n.Backlog, n.Lost, a.Drain.Ended, a.Drain.S)
			require.Greater(t, n.Expected, 4*int64(300), "the publishers outran what the broker delivers")
			assert.Equal(t, 4*int64(300), n.Received, "each subscriber got exactly what the broker delivered")
			assert.Equal(t, n.Expected, n.Received+n.Backlog+n.InFlight+n.Lost, "every due delivery is accounted for once")
			assert.False(t, res.DrainComplete)
			assert.Equal(t, DrainStalled, a.Drain.Ended, "nothing arrives any more: the drain ends stalled, before its bound")
			switch {
			case tc.drop:
				assert.Zero(t, n.Backlog)
				assert.Equal(t, n.Expected-n.Received, n.Lost, "dropped messages are lost")
			case tc.report:
				assert.Zero(t, n.Lost, "a backlog is not a loss")
				assert.Equal(t, hd.held.Load(), n.Backlog, "the broker's own count")
				require.NotNil(t, a.Held)
			default:
				assert.Nil(t, a.Held)
				assert.NotEmpty(t, a.HeldError)
				assert.Equal(t, n.Expected-n.Received, n.Lost, "unverified: what is missing counts as lost")
			}
			// Latency covers what was sent in the window and arrived; the
			// rest of it is among the backlog or lost, never dropped from
			// the statistics silently.
			assert.Positive(t, n.DueInWindow)
			assert.LessOrEqual(t, res.Latency.Count, n.DueInWindow)
			assert.LessOrEqual(t, n.DueInWindow-res.Latency.Count, n.Backlog+n.InFlight+n.Lost)
		})
	}
}

// TestAccountingDeliversEverything: a broker that delivers everything
// ends the drain complete, nothing missing, every window message in the
// latency statistics.
func TestAccountingDeliversEverything(t *testing.T) {
	d := reportingDriver{&holdingDriver{deliverUpTo: 1 << 40}}
	c := heldCase()
	c.Warmup = 200 * time.Millisecond
	res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-all", Driver: d, Seed: 5})
	require.NoError(t, err)
	n := res.Counts
	assert.True(t, res.DrainComplete)
	assert.Equal(t, DrainComplete, res.Accounting.Drain.Ended)
	assert.Equal(t, n.Expected, n.Received)
	assert.Zero(t, n.Lost+n.Backlog+n.InFlight)
	assert.Equal(t, n.DueInWindow, res.Latency.Count, "every message sent in the window has its latency counted")
	assert.Positive(t, res.WarmupS)
}

// TestFlushOutlastsTheCaseDrain: sends still on their way to the broker
// when the window ends (here they reach it only after a 400 ms flush, four
// times the case's drain) are waited for, not counted as lost; a flush
// that the drain's upper bound cuts is recorded as cut, and what it left
// unsent counts as lost, unless the publishers can say what the broker has
// not received: then it is on its way to the broker (to broker), each send
// weighted by the deliveries due for it.
func TestFlushOutlastsTheCaseDrain(t *testing.T) {
	for _, tc := range []struct {
		name       string
		delay      time.Duration
		maxDrain   time.Duration
		cut        bool
		unreceived bool
		routed     bool
	}{
		{"waited-for", 400 * time.Millisecond, 30 * time.Second, false, false, true},
		{"cut-by-the-bound", time.Hour, 200 * time.Millisecond, true, false, false},
		{"cut, publishers say what the broker has not received", time.Hour, 200 * time.Millisecond, true, true, false},
		{"cut, the broker says what it routed", time.Hour, 200 * time.Millisecond, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hd := &holdingDriver{deliverUpTo: 1 << 40, flushDelay: tc.delay, unreceived: tc.unreceived, routed: tc.routed}
			c := heldCase()
			res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-flush", Driver: reportingDriver{hd}, Seed: 5, MaxDrain: tc.maxDrain})
			require.NoError(t, err)
			n, a := res.Counts, res.Accounting
			require.NotNil(t, a)
			require.Positive(t, n.Expected)
			assert.Equal(t, tc.cut, a.Drain.FlushCut)
			assert.Equal(t, n.Expected, n.Received+n.Backlog+n.InFlight+n.ToBroker+n.Lost, "every due delivery is accounted for once")
			switch {
			case tc.unreceived:
				assert.Zero(t, n.Received)
				assert.Equal(t, n.Sent, a.ToBrokerSends, "no send reached the broker")
				assert.Equal(t, 2*n.Sent, n.Expected, "two subscribers per topic")
				assert.Equal(t, n.Expected, n.ToBroker, "every due delivery is on its way to the broker")
				assert.Zero(t, n.Lost)
				assert.Empty(t, a.ToBrokerError)
			case tc.cut && tc.routed:
				assert.Zero(t, n.Received)
				require.NotNil(t, a.Held.Routed)
				assert.Zero(t, *a.Held.Routed, "nothing reached the broker")
				assert.True(t, a.ToBrokerUnrouted)
				assert.Zero(t, a.ToBrokerSends, "the broker counts deliveries, not sends")
				assert.Equal(t, n.Expected, n.ToBroker, "every due delivery is on its way to the broker")
				assert.Zero(t, n.Lost)
				assert.Empty(t, a.ToBrokerError)
			case tc.cut:
				assert.Zero(t, n.Received, "the cut flush left every send unsent")
				assert.Equal(t, n.Expected, n.Lost)
				assert.False(t, res.DrainComplete)
				assert.Contains(t, a.ToBrokerError, "cannot say")
			default:
				assert.Equal(t, n.Expected, n.Received, "sends that reached the broker during the flush were delivered")
				assert.Zero(t, n.Lost)
				assert.True(t, res.DrainComplete)
				assert.GreaterOrEqual(t, a.Drain.FlushS, tc.delay.Seconds(), "the flush waited for the sends")
				require.NotNil(t, a.Held.Routed)
				assert.Equal(t, n.Expected, *a.Held.Routed, "the broker routed every due delivery")
				assert.False(t, a.ToBrokerUnrouted, "asked only when the flush was cut")
				assert.Zero(t, n.ToBroker)
			}
		})
	}
}

// TestOutagesWithoutFaultsAreUnexplained: in a case without a fault
// schedule every client outage is unexplained (the record is flagged
// connections-lost), and its cause is counted.
func TestOutagesWithoutFaultsAreUnexplained(t *testing.T) {
	hd := &holdingDriver{deliverUpTo: 1 << 40, subOutage: "broker sent ERROR: connection TTL"}
	res, err := Run(context.Background(), Config{Case: heldCase(), Prefix: "pslab-test-outage", Driver: reportingDriver{hd}, Seed: 5})
	require.NoError(t, err)
	assert.Equal(t, 4, res.ClientOutages, "one per subscriber")
	assert.Equal(t, res.ClientOutages, res.UnexplainedOutages)
	assert.Equal(t, map[string]int{"broker sent ERROR: connection TTL": 4}, res.OutageCauses)
}

// TestUnroutedAfterOutages: with the flush cut, the broker's routed count
// stands for the sends on their way after a durable subscriber's outage
// (its queue lived on) but not after a non-durable one's (its queue was
// made anew); the deliveries due for sends in doubt are taken off it.
func TestUnroutedAfterOutages(t *testing.T) {
	for _, tc := range []struct {
		name string
		sub  scenario.Subscription
		hd   *holdingDriver
	}{
		{"durable subscribers lost their connections", scenario.Durable, &holdingDriver{subOutage: "EOF"}},
		{"non-durable subscribers lost their connections", scenario.NonDurable, &holdingDriver{subOutage: "EOF"}},
		{"publishers with sends in doubt", scenario.Durable, &holdingDriver{pubInDoubt: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hd := tc.hd
			hd.deliverUpTo, hd.flushDelay, hd.routed = 1<<40, time.Hour, true
			c := heldCase()
			c.Subscription = tc.sub
			res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-outage-cut", Driver: reportingDriver{hd}, Seed: 5, MaxDrain: 200 * time.Millisecond})
			require.NoError(t, err)
			n, a := res.Counts, res.Accounting
			require.True(t, a.Drain.FlushCut)
			require.Positive(t, n.Expected)
			assert.Zero(t, n.Received, "nothing reached the broker")
			assert.Equal(t, n.Expected, n.ToBroker+n.Lost)
			switch {
			case tc.sub == scenario.NonDurable:
				assert.Contains(t, a.ToBrokerError, "non-durable subscriber connection(s) were lost")
				assert.Zero(t, n.ToBroker)
			case hd.pubInDoubt > 0:
				assert.Empty(t, a.ToBrokerError)
				assert.Equal(t, int64(2*2*5), a.DueInDoubt, "2 publishers, 5 sends in doubt each, 2 subscribers per topic")
				assert.Equal(t, a.DueInDoubt, n.Lost, "what was due for sends in doubt stays lost")
			default:
				assert.Empty(t, a.ToBrokerError)
				assert.Equal(t, n.Expected, n.ToBroker, "a durable queue lived through its subscriber's outage")
			}
		})
	}
}

func TestUnrouted(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name     string
		expected int64
		held     *driver.Held
		broken   string
		inDoubt  int64
		toBroker int64
		why      string
	}{
		{"routed part of what was due", 100, &driver.Held{Routed: n(70)}, "", 0, 30, ""},
		{"routed all", 100, &driver.Held{Routed: n(100)}, "", 0, 0, ""},
		{"sends in doubt may never arrive", 100, &driver.Held{Routed: n(70)}, "", 12, 18, ""},
		{"no more than what is in doubt", 100, &driver.Held{Routed: n(70)}, "", 40, 0, ""},
		{"broker not asked", 100, nil, "", 0, 0, "cannot say"},
		{"broker cannot count what it routed", 100, &driver.Held{}, "", 0, 0, "cannot say"},
		{"a queue made anew", 100, &driver.Held{Routed: n(70)}, "1 non-durable subscriber connection(s) were lost", 0, 0, "were lost"},
		{"more routed than due", 100, &driver.Held{Routed: n(130)}, "", 0, 0, "more than the 100 due"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, why := unrouted(tc.expected, tc.held, tc.broken, tc.inDoubt)
			assert.Equal(t, tc.toBroker, tb)
			if tc.why == "" {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, tc.why)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		missing, pending, held, toBroker int64
		known                            bool
		inFlight, backlog, toBrk, los    int64
	}{
		{100, 0, 100, 0, true, 0, 100, 0, 0},
		{100, 0, 150, 0, true, 0, 100, 0, 0}, // the broker also counts received, unacknowledged messages
		{100, 10, 60, 0, true, 10, 60, 0, 30},
		{100, 0, 0, 0, true, 0, 0, 0, 100},
		{100, 0, 100, 0, false, 0, 0, 0, 100},
		{0, 5, 5, 5, true, 0, 0, 0, 0},
		{-3, 0, 0, 0, true, 0, 0, 0, 0},
		{100, 10, 60, 20, true, 10, 60, 20, 10}, // sends not yet at the broker
		{100, 10, 60, 50, true, 10, 60, 30, 0},  // bounded by what is left
		{100, 10, 60, 20, false, 10, 0, 20, 70}, // the broker not asked: its share stays in lost
	} {
		f, b, tb, l := Split(tc.missing, tc.pending, tc.held, tc.toBroker, tc.known)
		assert.Equal(t, []int64{tc.inFlight, tc.backlog, tc.toBrk, tc.los}, []int64{f, b, tb, l}, "%+v", tc)
	}
}

func TestLevelled(t *testing.T) {
	assert.True(t, levelled(1000, 1000))
	assert.True(t, levelled(1000, 1150))
	assert.True(t, levelled(1150, 1000))
	assert.False(t, levelled(1000, 1400), "still ramping up")
	assert.False(t, levelled(1400, 1000), "a warm-up backlog still being delivered")
	assert.False(t, levelled(0, 0), "nothing delivered")
	assert.False(t, levelled(0, 10))
	assert.Equal(t, 250*time.Millisecond, steadySpan(200*time.Millisecond))
	assert.Equal(t, time.Second, steadySpan(10*time.Second))
	assert.Equal(t, 500*time.Millisecond, steadySpan(time.Second))
}
