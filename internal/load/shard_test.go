package load

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/metrics"
	"pslab/internal/scenario"
)

// TestShardsHoldWholeTopics: every client is in exactly one shard, with
// every client of its topic; shards are balanced by clients; a case whose
// messages cross topics stays whole.
func TestShardsHoldWholeTopics(t *testing.T) {
	f := scenario.Factors{Publishers: 10, Subscribers: 25, Topics: 5}
	shards, err := Shards(f, 2)
	require.NoError(t, err)
	require.Len(t, shards, 2)
	pubs, subs := map[int]int{}, map[int]int{}
	for k, s := range shards {
		assert.Equal(t, k, s.Index)
		assert.Equal(t, 2, s.Of)
		in := map[int]bool{}
		for _, tp := range s.Topics {
			in[tp] = true
		}
		for _, i := range s.Publishers {
			pubs[i]++
			assert.True(t, in[f.TopicOfPublisher(i)], "publisher %d with its topic", i)
		}
		for _, j := range s.Subscribers {
			subs[j]++
			assert.True(t, in[f.TopicOfSubscriber(j)], "subscriber %d with its topic", j)
		}
	}
	assert.Len(t, pubs, 10)
	assert.Len(t, subs, 25)
	for _, n := range pubs {
		assert.Equal(t, 1, n)
	}
	for _, n := range subs {
		assert.Equal(t, 1, n)
	}
	a := len(shards[0].Publishers) + len(shards[0].Subscribers)
	assert.InDelta(t, 35.0/2, float64(a), 7, "5 topics of 7 clients: 3 and 2 topics")

	one, err := Shards(scenario.Factors{Publishers: 4, Subscribers: 4, Topics: 4, TopicRoundRobin: true}, 4)
	require.NoError(t, err)
	assert.Len(t, one, 1, "messages cross topics: one shard")
	few, err := Shards(scenario.Factors{Publishers: 1, Subscribers: 2, Topics: 2}, 8)
	require.NoError(t, err)
	assert.Len(t, few, 2, "no more shards than topics with clients")
	_, err = Shards(f, 0)
	assert.Error(t, err)
}

// shardResult is a shard's result with latencies lat (ms) in its
// histogram.
func shardResult(sub float64, expected, received int64, pending int64, lat ...int) *Result {
	h := metrics.NewHistogram()
	for _, ms := range lat {
		h.Record(time.Duration(ms) * time.Millisecond)
	}
	return &Result{SubTput: sub, PubTput: sub, WarmupS: 2, DrainComplete: true, Histogram: h, Latency: h.Summary(),
		Counts:     Counts{Sent: expected, Expected: expected, Received: received, ReceivedInWindow: received, DueInWindow: expected},
		SubSeries:  []int64{1, 2, 3},
		Accounting: &Accounting{ClientPending: pending, Drain: Drain{Ended: DrainComplete, S: 1}, Steady: Steady{Levelled: true}}}
}

// TestMergeIsExact: counts and throughputs add, latency comes from the
// merged histogram (the median of all deliveries, not the mean of the
// shards' medians), the series add, and what is missing is split again
// with the broker's one answer for the whole case.
func TestMergeIsExact(t *testing.T) {
	fast := shardResult(100, 1000, 990, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	slow := shardResult(10, 100, 90, 0, 100, 100, 100)
	m, err := Merge([]*Result{fast, slow}, &driver.Held{Backlog: 50, Source: "test"}, "")
	require.NoError(t, err)
	assert.Equal(t, 110.0, m.SubTput)
	assert.Equal(t, int64(1100), m.Counts.Expected)
	assert.Equal(t, int64(1080), m.Counts.Received)
	assert.Equal(t, int64(12), m.Latency.Count)
	// 9 of 12 deliveries took 1 ms: the median is 1 ms (the mean of the
	// shards' medians would say 50.5 ms).
	assert.InDelta(t, 1.0, m.Latency.P50Ms, 0.01)
	assert.InDelta(t, 100.0, m.Latency.MaxMs, 0.1)
	assert.Equal(t, []int64{2, 4, 6}, m.SubSeries)
	// 20 missing: 4 in the clients, 16 of the broker's 50, none lost.
	assert.Equal(t, int64(4), m.Counts.InFlight)
	assert.Equal(t, int64(16), m.Counts.Backlog)
	assert.Zero(t, m.Counts.Lost)
	assert.Equal(t, "test", m.Accounting.Held.Source)

	// Without the broker's answer what is not in the clients is lost.
	m, err = Merge([]*Result{fast, slow}, nil, "broker gone")
	require.NoError(t, err)
	assert.Equal(t, int64(16), m.Counts.Lost)
	assert.Equal(t, "broker gone", m.Accounting.HeldError)

	noHist := shardResult(1, 1, 1, 0)
	noHist.Histogram = nil
	_, err = Merge([]*Result{fast, noHist}, nil, "")
	assert.ErrorContains(t, err, "percentiles cannot be merged from summaries")
	late := shardResult(1, 1, 1, 0, 1)
	late.WarmupS = 3
	_, err = Merge([]*Result{fast, late}, nil, "")
	assert.ErrorContains(t, err, "shards must share their phases")
	faulty := shardResult(1, 1, 1, 0, 1)
	faulty.Faults = []FaultResult{{}}
	_, err = Merge([]*Result{faulty}, nil, "")
	assert.ErrorContains(t, err, "fault schedule")
}
