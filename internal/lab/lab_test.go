package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers/nats"
	"pslab/internal/driver"
	"pslab/internal/load"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
	"pslab/netem/linkinfo"
)

func record(clientCPU, brokerCPU float64, complete bool, lost int64) *results.Record {
	return &results.Record{
		Resources: &results.Resources{ClientCPUPct: clientCPU, BrokerCPUPct: brokerCPU, Cores: 2},
		Result:    &load.Result{DrainComplete: complete, Counts: load.Counts{Lost: lost, Expected: 100, ReceivedInWindow: 1000}},
		Network:   results.Network{Path: "namespaces"},
	}
}

func flagNames(fs []results.Flag) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Name))
	}
	return out
}

func TestFlags(t *testing.T) {
	assert.Empty(t, flagsFor(record(50, 50, true, 0)))
	assert.Equal(t, []string{"cpu-saturated"}, flagNames(flagsFor(record(80, 110, true, 0))))
	assert.Equal(t, []string{"cpu-saturated", "client-bound"}, flagNames(flagsFor(record(150, 40, true, 0))))
	assert.Equal(t, []string{"drain-incomplete"}, flagNames(flagsFor(record(10, 10, false, 7))))
	r := record(10, 10, true, 0)
	r.Result.Counts.ReceivedInWindow = 0
	r.Result.Counts.DecodeErrors = 1
	r.Network.Path = "loopback"
	assert.Equal(t, []string{"bad-deliveries", "no-deliveries-in-window", "loopback"}, flagNames(flagsFor(r)))
}

func TestMakePlanRefusesUnknownBrokerAndNetwork(t *testing.T) {
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{"nats"}, Networks: []string{"wireline"}, Reps: 1,
		Cases: []scenario.Case{scenario.Defaults()}}
	_, err := MakePlan(s, Options{Brokers: []string{"rabbit"}})
	assert.ErrorContains(t, err, `unknown broker "rabbit"`)
	_, err = MakePlan(s, Options{Networks: []string{"carrier-pigeon"}})
	assert.Error(t, err)
	_, err = MakePlan(s, Options{Cases: func(string) bool { return false }})
	assert.ErrorContains(t, err, "no case")
	_, err = MakePlan(s, Options{LabName: "Bad Name"})
	assert.Error(t, err)
	p, err := MakePlan(s, Options{Reps: 4})
	assert.NoError(t, err)
	assert.Equal(t, 4, p.Units())
}

func TestPublishWindowFollowsTheLink(t *testing.T) {
	c := scenario.Defaults()
	c.Publishers, c.Size = 1, 100
	wire := &network{profile: netem.Profile{Name: "wireline"}}
	wifi := &network{profile: netem.Profile{Name: "wifi", RateKbit: 1000, LossPct: 3}}
	assert.Equal(t, 1024, wire.publishWindow(c, nil), "unshaped: 1024 messages per publisher")
	c.Size = 5120
	assert.Equal(t, 1024, wire.publishWindow(c, nil), "unshaped: the same count at 5 KB (size is not confounded)")
	c.Size = 65536
	assert.Equal(t, 128, wire.publishWindow(c, nil), "64 KiB bodies: 8 MiB per publisher")
	c.Size, c.Publishers = 100, 16
	assert.Equal(t, 1024, wire.publishWindow(c, nil), "16 x 1024 messages is within the case cap")
	c.Publishers = 400
	assert.Equal(t, 40, wire.publishWindow(c, nil), "unshaped: 16 Ki messages for the whole case")
	c.Size = 5120
	assert.Equal(t, 8, wire.publishWindow(c, nil), "unshaped: 16 MiB of bodies for the whole case")
	c.Size = 100
	c.Publishers = 50
	assert.Equal(t, 12, wifi.publishWindow(c, nil), "1 Mbit/s: 62500 B per case, 1250 B per publisher")
	c.Size = 5120
	assert.Equal(t, 1, wifi.publishWindow(c, nil), "at least one message")
	c.PublishWindow = 7
	assert.Equal(t, 7, wifi.publishWindow(c, nil), "the scenario's window wins")
}

// TestDeliveryWindowFollowsTheLink: JetStream subscribers on a shaped
// link share 4 s of the link's rate (at least one message each) and get a
// 2 min redelivery timer; core NATS (pushed, nothing pulled) and unshaped
// paths keep the driver's defaults.
func TestDeliveryWindowFollowsTheLink(t *testing.T) {
	c := scenario.Defaults()
	c.Subscribers, c.Size = 100, 100
	c.Subscription, c.Delivery, c.Ack = scenario.Durable, scenario.Persistent, scenario.AckAuto
	nats := &nats.Driver{}
	wire := &network{profile: netem.Profile{Name: "wireline"}}
	wifi := &network{profile: netem.Profile{Name: "wifi", RateKbit: 1000, LossPct: 3}}
	w, wait := wifi.deliveryFlow(c, nats)
	assert.Equal(t, 50, w, "1 Mbit/s: 500 000 B over 100 subscribers, 5000 B each, of 100 B messages")
	assert.Equal(t, 2*time.Minute, wait, "TCP's longest back-off")
	c.Subscribers = 1
	w, _ = wifi.deliveryFlow(c, nats)
	assert.Equal(t, 1024, w, "one subscriber: the window's cap")
	c.Subscribers, c.Size = 50, 5120
	w, _ = wifi.deliveryFlow(c, nats)
	assert.Equal(t, 1, w, "at least one message")
	w, wait = wire.deliveryFlow(c, nats)
	assert.Zero(t, w, "unshaped: the driver's default window")
	assert.Zero(t, wait, "unshaped: the driver's default timer")
	w, wait = wifi.deliveryFlow(c, nil)
	assert.Zero(t, w+int(wait), "a driver that does not pull")
	c.Subscription, c.Delivery = scenario.NonDurable, scenario.NonPersistent
	w, wait = wifi.deliveryFlow(c, nats)
	assert.Zero(t, w+int(wait), "core NATS: the server pushes")
	assert.Equal(t, 2*time.Minute, wifi.stallTolerance(), "a shaped link: TCP's longest back-off")
	assert.Zero(t, wire.stallTolerance(), "unshaped: the driver's default")
}

func TestCoreNATSIsTCPBoundedOnlyWhenUnshaped(t *testing.T) {
	c := scenario.Defaults()
	c.Publishers, c.Size = 1, 100
	c.Subscription, c.Delivery, c.Ack = scenario.NonDurable, scenario.NonPersistent, scenario.AckAuto
	nats := &nats.Driver{}
	wire := &network{profile: netem.Profile{Name: "wireline"}}
	wifi := &network{profile: netem.Profile{Name: "wifi", RateKbit: 1000, LossPct: 3}}
	assert.Equal(t, driver.TCPBoundedWindow, wire.publishWindow(c, nats), "core NATS unshaped: TCP backpressure only")
	assert.Equal(t, 625, wifi.publishWindow(c, nats), "core NATS on 1 Mbit/s keeps half a second of link time")
	c.Delivery = scenario.Persistent
	assert.Equal(t, driver.WindowMessages, wire.publishWindow(c, nats), "JetStream keeps the message window")
	c.Delivery = scenario.NonPersistent
	c.Subscription = scenario.Durable
	assert.Equal(t, driver.WindowMessages, wire.publishWindow(c, nats), "a durable (JetStream) case keeps it too")
}

func TestNotSaturatedFlagOnCapacityCases(t *testing.T) {
	r := record(50, 50, true, 0)
	r.Settings.Capacity = true
	r.Throughput = results.ThroughputOf(r)
	assert.Equal(t, []string{"not-saturated"}, flagNames(flagsFor(r)), "machine half idle")
	r = record(90, 100, true, 0)
	r.Settings.Capacity = true
	r.Throughput = results.ThroughputOf(r)
	assert.Equal(t, []string{"cpu-saturated"}, flagNames(flagsFor(r)), "broker one core, machine busy: a capacity run")
	r = record(50, 50, true, 0)
	r.Throughput = results.ThroughputOf(r)
	assert.Empty(t, flagsFor(r), "not a capacity case: no flag")
}

func TestMakePlanHonoursCaseBrokers(t *testing.T) {
	prop := scenario.Defaults()
	prop.ID, prop.Brokers = "prop", []string{"artemis"}
	prop.Filter, prop.FilterForm, prop.Values, prop.Matching = scenario.FilterProperty, scenario.FormSimple, 1, 1
	subj := prop
	subj.ID, subj.Brokers, subj.Filter = "subj", []string{"nats"}, scenario.FilterSubject
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{"nats", "artemis"}, Networks: []string{"wireline"}, Reps: 1,
		Cases: []scenario.Case{prop, subj}}
	p, err := MakePlan(s, Options{})
	assert.NoError(t, err)
	assert.Equal(t, 2, p.Units(), "each case on its broker only")
	_, err = MakePlan(s, Options{Brokers: []string{"nats"}, Cases: func(id string) bool { return id == "prop" }})
	assert.ErrorContains(t, err, "no case of t.yaml runs on nats")
	prop.Brokers = nil // a property filter on NATS is refused with the reason
	s.Cases = []scenario.Case{prop}
	_, err = MakePlan(s, Options{Brokers: []string{"nats"}})
	assert.ErrorContains(t, err, "routes by subject only")
	prop.Brokers = []string{"rabbit"}
	s.Cases = []scenario.Case{prop}
	_, err = MakePlan(s, Options{})
	assert.ErrorContains(t, err, `unknown broker "rabbit"`)
}

// TestSkipUnsupportedLeavesOutWhatABrokerRefuses: with SkipUnsupported a
// case a broker cannot express is not run there, with the reason as a
// note, and still runs on the brokers that can.
func TestSkipUnsupportedLeavesOutWhatABrokerRefuses(t *testing.T) {
	prop := scenario.Defaults()
	prop.ID = "prop"
	prop.Filter, prop.FilterForm, prop.Values, prop.Matching = scenario.FilterProperty, scenario.FormSimple, 1, 1
	plain := scenario.Defaults()
	plain.ID = "plain"
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{"nats", "artemis"}, Networks: []string{"wireline"}, Reps: 1,
		Cases: []scenario.Case{prop, plain}}
	_, err := MakePlan(s, Options{})
	assert.ErrorContains(t, err, "routes by subject only", "refused without the option")
	p, err := MakePlan(s, Options{SkipUnsupported: true})
	require.NoError(t, err)
	assert.Equal(t, 3, p.Units(), "prop on artemis only, plain on both")
	assert.True(t, p.Cases[0].ForBroker("artemis"))
	assert.False(t, p.Cases[0].ForBroker("nats"))
	assert.Contains(t, strings.Join(p.Notes, "\n"), "case prop not run on nats: nats: filter property")
	_, err = MakePlan(s, Options{SkipUnsupported: true, Brokers: []string{"nats"}, Cases: func(id string) bool { return id == "prop" }})
	assert.ErrorContains(t, err, "no case of t.yaml runs on nats")
}

// TestLinkOffFlagsAVerificationOutOfTolerance: a record whose link was
// verified within pslab netem verify's default tolerances carries no
// link-off flag; one whose goodput was 20 % short does, naming the
// direction, and so does each role's link of a network with one per role.
func TestLinkOffFlagsAVerificationOutOfTolerance(t *testing.T) {
	good := linkinfo.Verification{
		ToBroker: linkinfo.DirResult{Direction: "to-broker", GoodputKbit: 960, ExpectedGoodputKbit: 1000, LossPct: 3.4, ExpectedLossPct: 3},
		ToClient: linkinfo.DirResult{Direction: "to-client", GoodputKbit: 1040, ExpectedGoodputKbit: 1000, LossPct: 2.5, ExpectedLossPct: 3},
	}
	short := good
	short.ToClient.GoodputKbit = 800
	r := record(10, 10, true, 0)
	r.Network.Profile, r.Network.Verify = "wifi-paper", &good
	assert.Empty(t, flagNames(flagsFor(r)))
	r.Network.Verify = &short
	fl := flagsFor(r)
	require.Equal(t, []string{"link-off"}, flagNames(fl))
	assert.Contains(t, fl[0].Detail, "wifi-paper: to-client: goodput 800.0 kbit/s is -20.0 % off")

	r.Network.Verify = nil
	r.Network.Links = []results.RoleLink{
		{Role: results.RolePublishers, Profile: "wifi-paper", Verify: &short},
		{Role: results.RoleSubscribers, Profile: "wireline"},
	}
	fl = flagsFor(r)
	require.Equal(t, []string{"link-off"}, flagNames(fl))
	assert.Contains(t, fl[0].Detail, "publishers on wifi-paper: to-client")
}
