package drivertest

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// AbortKeepsDurable: an aborted durable subscriber gets nothing more, its
// subscription stays, and a new subscriber with the same durable name and
// client id gets what was published meanwhile; an aborted publisher's
// confirmed sends are all there.
func AbortKeepsDurable(t *testing.T, d driver.Driver, f scenario.Factors) {
	ctx := context.Background()
	cs := driver.CaseSpec{Prefix: TestPrefix(), Factors: f}
	if err := d.Prepare(ctx, cs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Purge(context.Background(), cs.Prefix); err != nil {
			t.Errorf("purge: %v", err)
		}
	})
	spec := driver.SubSpec{Case: cs, DurableName: "d1", ClientID: cs.Prefix + "-c1"}
	sink := NewSeqSink()
	sub, err := d.Subscriber(ctx, spec, sink.Handle)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: cs, Window: 40})
	if err != nil {
		t.Fatal(err)
	}
	publish := func(from, to uint64) {
		t.Helper()
		for seq := from; seq <= to; seq++ {
			body := make([]byte, 100)
			binary.BigEndian.PutUint64(body, seq)
			if err := pub.Publish(ctx, driver.Message{Body: body, Sel: -1}); err != nil {
				t.Fatal(err)
			}
		}
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := pub.Flush(fctx); err != nil {
			t.Fatal(err)
		}
	}
	publish(1, 50)
	WaitFor(t, 30*time.Second, "50 messages before the abort", func() bool { return sink.Count(0) >= 50 })

	a, ok := sub.(driver.Aborter)
	if !ok {
		t.Fatalf("%T does not implement driver.Aborter", sub)
	}
	a.Abort()
	before := sink.Count(0)
	publish(51, 100)
	time.Sleep(300 * time.Millisecond)
	if n := sink.Count(0); n != before {
		t.Errorf("%d deliveries after Abort", n-before)
	}
	pa, ok := pub.(driver.Aborter)
	if !ok {
		t.Fatalf("%T does not implement driver.Aborter", pub)
	}
	pa.Abort()

	again := NewSeqSink()
	sub2, err := d.Subscriber(ctx, spec, again.Handle)
	if err != nil {
		t.Fatalf("subscribing again after the abort: %v", err)
	}
	defer sub2.Close()
	WaitFor(t, 30*time.Second, "the 50 messages published while away", func() bool { return again.Count(50) >= 50 })
}
