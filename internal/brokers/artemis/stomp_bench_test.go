package artemis_test

import (
	"context"
	"encoding/binary"
	"sort"
	"sync"
	"testing"
	"time"

	"pslab/internal/brokers/artemis"
	"pslab/internal/driver"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// BenchmarkSTOMP drives the STOMP driver directly against a real Artemis on
// loopback: 1 publisher, 1 subscriber, 100 B bodies, AUTO ack, window 1000,
// after 100000 warm-up messages. It reports end-to-end msgs/s (first send
// to last delivery), the publisher's own rate, and latency percentiles
// (send time stamped in the body). Unpaced, the publisher saturates and
// latency includes the queue that builds when it outruns the subscriber;
// the paced case sends at a fixed rate the subscriber keeps up with.
//
//	go test -run '^$' -bench STOMP -benchtime 200000x ./internal/brokers/artemis
func BenchmarkSTOMP(b *testing.B) {
	_, _, d := testbroker.RunArtemis(b, artemis.ArtemisConfig{Instance: "test-driver", HeapMB: 1024})
	for _, bc := range []struct {
		name string
		sub  scenario.Subscription
		del  scenario.Delivery
		rate int // msgs/s; 0: saturate
	}{
		{"nondurable-nonpersistent", scenario.NonDurable, scenario.NonPersistent, 0},
		{"durable-persistent", scenario.Durable, scenario.Persistent, 0},
		{"nondurable-nonpersistent-5000/s", scenario.NonDurable, scenario.NonPersistent, 5000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne,
				Subscription: bc.sub, Delivery: bc.del, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
			benchSTOMP(b, d, f, bc.rate)
		})
	}
}

func benchSTOMP(b *testing.B, d driver.Driver, f scenario.Factors, rate int) {
	ctx := context.Background()
	cs := driver.CaseSpec{Prefix: "pslab-bench", Factors: f}
	d.Purge(ctx, cs.Prefix)
	defer d.Purge(ctx, cs.Prefix)

	n := b.N
	lat := make([]time.Duration, 0, n)
	var mu sync.Mutex
	var warm int
	warmed, done := make(chan struct{}), make(chan struct{})
	const warmup = 100000 // the broker's JIT needs this many to reach speed
	start := time.Now()
	sub, err := d.Subscriber(ctx, driver.SubSpec{Case: cs, ClientID: "pslab-bench-c", DurableName: "d"}, func(m driver.Delivery) {
		sent := int64(binary.LittleEndian.Uint64(m.Body))
		mu.Lock()
		defer mu.Unlock()
		if m.Body[8] == 1 {
			if warm++; warm == warmup {
				close(warmed)
			}
			return
		}
		lat = append(lat, time.Duration(time.Since(start).Nanoseconds()-sent))
		if len(lat) == n {
			close(done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: cs, Window: 1000})
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	body := make([]byte, f.Size)
	body[8] = 1
	for i := 0; i < warmup; i++ {
		if err := pub.Publish(ctx, driver.Message{Body: body, Sel: -1}); err != nil {
			b.Fatal(err)
		}
	}
	<-warmed
	body[8] = 0
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if rate > 0 { // open loop: send i at t0 + i/rate
			if wait := time.Until(t0.Add(time.Duration(i) * time.Second / time.Duration(rate))); wait > 0 {
				time.Sleep(wait)
			}
		}
		binary.LittleEndian.PutUint64(body, uint64(time.Since(start).Nanoseconds()))
		if err := pub.Publish(ctx, driver.Message{Body: body, Sel: -1}); err != nil {
			b.Fatal(err)
		}
	}
	pubElapsed := time.Since(t0)
	select {
	case <-done:
	case <-time.After(5*time.Minute + time.Duration(n)*time.Millisecond):
		mu.Lock()
		got := len(lat) // the handler may still be appending
		mu.Unlock()
		b.Fatalf("received %d of %d", got, n)
	}
	elapsed := time.Since(t0)
	b.StopTimer()
	mu.Lock()
	sorted := append([]time.Duration(nil), lat[:n]...) // the handler may still append a late duplicate to lat
	mu.Unlock()
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	var sum time.Duration
	for _, l := range sorted {
		sum += l
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(n)/pubElapsed.Seconds(), "pub-msgs/s")
	b.ReportMetric(float64(sum.Microseconds())/float64(n), "mean-µs")
	b.ReportMetric(float64(sorted[n/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(sorted[n*99/100].Microseconds()), "p99-µs")
}
