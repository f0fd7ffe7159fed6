package lab

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/scenario"
	"pslab/netem"
)

// purgeWaitsDriver's purge takes until its context ends (a long purge of
// many durable subscriptions); the test cancels it as SIGINT would.
type purgeWaitsDriver struct {
	driver.Driver // nil: only the methods below are called
	started       chan struct{}
}

func (d *purgeWaitsDriver) Name() string                      { return "nats" }
func (d *purgeWaitsDriver) Mechanism(scenario.Factors) string { return "test" }
func (d *purgeWaitsDriver) Purge(ctx context.Context, _ string) error {
	select {
	case d.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

// idleBroker is a broker that runs nowhere: runCase only reads its name,
// version and settings.
type idleBroker struct{}

func (idleBroker) Name() string { return "nats" }
func (idleBroker) Start(context.Context, broker.Host) (driver.Endpoint, error) {
	return driver.Endpoint{}, nil
}
func (idleBroker) Stop(context.Context) error  { return nil }
func (idleBroker) PID() int                    { return 0 }
func (idleBroker) Version() string             { return "test" }
func (idleBroker) Settings() map[string]string { return nil }

// TestInterruptedPurgeWritesNoRecord: SIGINT during the purge before a
// case ends the case without a record (before, it wrote a FAILED record,
// "purge: context canceled", that reports counted as a failed repetition).
func TestInterruptedPurgeWritesNoRecord(t *testing.T) {
	d := &purgeWaitsDriver{started: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-d.started; cancel() }()
	c := scenario.Defaults()
	c.ID = "p"
	nw := &network{profile: netem.Profile{Name: "wireline"}, host: broker.LoopbackHost{}}
	p := Plan{Suite: &scenario.Suite{Name: "t", File: "t.yaml"}}
	var log bytes.Buffer
	s := &session{o: Options{Log: &log}, p: p, runID: "test", nw: nw, b: idleBroker{}, drv: d}
	rec := s.runCase(ctx, c, 1)
	assert.Nil(t, rec, "an interrupted purge is no failed repetition")
}
