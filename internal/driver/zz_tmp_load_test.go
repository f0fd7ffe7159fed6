package driver_test

import (
	"context"
	"testing"
	"time"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/scenario"
)

func TestTmpLoad(t *testing.T) {
	a := broker.NewArtemis(broker.ArtemisConfig{Instance: "test-driver", Port: 61813, CorePort: 61816, HeapMB: 1024})
	ctx := context.Background()
	ep, err := a.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(ctx)
	d, _ := driver.NewSTOMP(ep)
	defer d.Close()
	for _, sub := range scenario.Subscriptions {
		for _, del := range scenario.Deliveries {
			for _, ack := range scenario.AckModes {
				for _, sel := range []bool{false, true} {
					c := scenario.Defaults()
					c.ID = "t"
					c.Model = scenario.OneToOne
					c.Subscription, c.Delivery, c.Ack, c.Selector = sub, del, ack, sel
					c.Warmup, c.Window, c.Drain = 2*time.Second, 5*time.Second, 10*time.Second
					c.DurableName, c.ClientID = "{prefix}-d{sub}", "{prefix}-c{sub}"
					prefix := "pslab-tl"
					res, err := load.Run(ctx, load.Config{Case: c, Prefix: prefix, Driver: d, Seed: 7})
					if err != nil {
						t.Fatal(err)
					}
					d.Purge(ctx, prefix)
					n := res.Counts
					t.Logf("%v: sent %d recv %d lost %d dup %d; pub %.0f sub %.0f msg/s; lat mean %.2f ms p99 %.2f ms", c.Factors, n.Sent, n.Received, n.Lost, n.Duplicated, res.PubTput, res.SubTput, res.Latency.MeanMs, res.Latency.P99Ms)
				}
			}
		}
	}
}
