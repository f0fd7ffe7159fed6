package lab

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/brokers/nats"
	"pslab/internal/driver"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// TestReviveBrokerRestartsADeadBroker: a broker process that dies between
// cases (here SIGKILL from outside, as the OOM killer would) is noticed and
// restarted before the next case, which is flagged; a live one is left
// alone.
func TestReviveBrokerRestartsADeadBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (a nats-server child) skipped in -short mode")
	}
	n := nats.NewServer(nats.ServerConfig{})
	ep, err := n.Start(context.Background(), broker.LoopbackHost{})
	require.NoError(t, err)
	defer n.Stop(context.Background())
	var log bytes.Buffer

	flag, err := reviveBroker(context.Background(), n, &log)
	require.NoError(t, err)
	assert.Empty(t, flag.Name, "a running broker is left alone")

	pid := n.PID()
	require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return n.Exited() != nil }, 10*time.Second, 20*time.Millisecond)
	assert.Contains(t, n.Exited().Error(), "killed")

	flag, err = reviveBroker(context.Background(), n, &log)
	require.NoError(t, err)
	assert.Equal(t, results.FlagBrokerRestarted, flag.Name, flag.String())
	assert.Contains(t, log.String(), "died")
	assert.NotEqual(t, pid, n.PID(), "a new process")
	assert.NoError(t, n.Exited())
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(ep.URL, "nats://"), 2*time.Second)
	require.NoError(t, err, "the restarted broker accepts clients at the same address")
	c.Close()
}

// TestUnshapedConnectSetUp: a case with connect_unshaped sets up its
// connections on a plain path and runs its window on the emulated link:
// the record says so, and 20 saturating publishers of 100 B messages get
// no more through than 1 Mbit/s carries (on an unshaped path they reach
// tens of thousands of msgs/s).
func TestUnshapedConnectSetUp(t *testing.T) {
	if testing.Short() {
		t.Skip("emulated link skipped in -short mode")
	}
	if err := netem.Supported(); err != nil {
		t.Skipf("no link emulation here: %v", err)
	}
	c := scenario.Defaults()
	c.ID, c.Name = "u", "unshaped set-up"
	c.Publishers, c.Subscribers, c.Topics = 20, 20, 20
	c.Warmup, c.Window, c.Drain = 500*time.Millisecond, 2*time.Second, time.Second
	c.ConnectUnshaped = true
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{"nats"}, Networks: []string{"wifi-paper"}, Reps: 1,
		Cases: []scenario.Case{c}}
	r := runOnly(t, s, Options{LabName: "labun"})
	require.Empty(t, r.Error)
	assert.True(t, r.Settings.ConnectUnshaped)
	assert.Greater(t, r.Phases.ReshapeS, 0.0, "the shaping was put back")
	assert.NotEqual(t, "none", r.Network.Backend, "a shaping backend")
	// 1 Mbit/s half duplex: a 100 B message costs well over 125 B each way.
	linkBound := 1e6 / 8 / 125.0
	assert.Less(t, r.Result.SubTput, 2*linkBound, "the window ran on the emulated link")
	assert.Greater(t, r.Result.SubTput, 0.0)
	assert.NotNil(t, r.Network.Link, "the link's counters over the case")
}

// hungDriver is a driver whose broker stops answering: its first purges
// fail until the broker process changes (a restart), and it runs no load.
type hungDriver struct {
	driver.Driver // nil: only the methods below are called
	b             broker.Broker
	hungPID       int
	purges        int
}

func (d *hungDriver) Name() string                      { return "nats" }
func (d *hungDriver) Mechanism(scenario.Factors) string { return "test" }
func (d *hungDriver) Supports(scenario.Factors) error   { return errors.New("no load in this test") }
func (d *hungDriver) Purge(context.Context, string) error {
	d.purges++
	if d.b.PID() == d.hungPID {
		return errors.New("management: no reply")
	}
	return nil
}

// TestUnansweringBrokerIsRestarted: a broker whose purge before a case
// fails twice is killed and started again, the purge is retried, and the
// case's record is flagged broker-restarted.
func TestUnansweringBrokerIsRestarted(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 10 s between purges")
	}
	n := nats.NewServer(nats.ServerConfig{})
	_, err := n.Start(context.Background(), broker.LoopbackHost{})
	require.NoError(t, err)
	defer n.Stop(context.Background())
	d := &hungDriver{b: n, hungPID: n.PID()}
	c := scenario.Defaults()
	c.ID = "h"
	nw := &network{profile: netem.Profile{Name: "wireline"}, host: broker.LoopbackHost{}}
	p := Plan{Suite: &scenario.Suite{Name: "t", File: "t.yaml"}}
	var log bytes.Buffer
	s := &session{o: Options{Log: &log}, p: p, runID: "test", nw: nw, b: n, drv: d}
	rec := s.runCase(context.Background(), c, 1)
	assert.Equal(t, 4, d.purges, "two failed purges, one after the restart, one after the case")
	assert.NotEqual(t, d.hungPID, n.PID(), "a new broker process")
	require.NotEmpty(t, rec.Flags)
	assert.Equal(t, results.FlagBrokerRestarted, rec.Flags[0].Name)
	assert.True(t, strings.HasPrefix(rec.Flags[0].Detail, "stopped answering"), rec.Flags[0].String())
	assert.Contains(t, rec.Error, "no load in this test", "the case went on after the restart")
}
