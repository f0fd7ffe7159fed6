package mosquitto

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/mqtt"
	"pslab/internal/mqtt/mqtttest"
	"pslab/internal/scenario"
)

func TestMain(m *testing.M) { broker.RunTests(m) }

// Hermetic: the configuration and the password file.

func TestConfigListensOnOneAddressWithAPassword(t *testing.T) {
	c := config{ListenIP: "10.77.2.2", Port: 1883, Dir: "/x/pslab-1", Persistence: true, User: "mosquitto"}
	conf := c.render()
	for _, want := range []string{"listener 1883 10.77.2.2\n", "allow_anonymous false\n", "password_file /x/pslab-1/passwd\n",
		"persistence true\n", "user mosquitto\n", "sys_interval 1\n", "queue_qos0_messages true\n", "set_tcp_nodelay true\n"} {
		assert.Contains(t, conf, want)
	}
	assert.Equal(t, 1, strings.Count(conf, "listener "), "one listener, on the lab's address only")
	c.Persistence, c.User = false, ""
	assert.Contains(t, c.render(), "persistence false\n")
	assert.NotContains(t, c.render(), "user ")
}

func TestPasswordLineIsMosquittosPBKDF2Format(t *testing.T) {
	line, err := passwordLine("pslab", "secret")
	require.NoError(t, err)
	parts := strings.Split(strings.TrimSpace(line), "$")
	require.Len(t, parts, 5, line)
	assert.Equal(t, "pslab:", parts[0])
	assert.Equal(t, "7", parts[1])
	assert.Equal(t, "101", parts[2])
	other, _ := passwordLine("pslab", "secret")
	assert.NotEqual(t, line, other, "a fresh salt each time")
}

// Integration: a real Mosquitto on loopback.

func startMosquitto(t *testing.T) (*Mosquitto, driver.Endpoint, *mqtt.Driver) {
	return startMosquittoV(t, mqtt.V311)
}

func startMosquittoV(t *testing.T, v mqtt.Version) (*Mosquitto, driver.Endpoint, *mqtt.Driver) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (a mosquitto process) skipped in -short mode")
	}
	if _, err := Binary(); err != nil {
		t.Fatalf("%v (scripts/test.sh installs it)", err)
	}
	m := New(Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ep, err := m.Start(ctx, broker.LoopbackHost{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	drv, err := Descriptor(v).NewDriver(ctx, ep)
	require.NoError(t, err)
	t.Cleanup(func() { _ = drv.Close() })
	return m, ep, drv.(*mqtt.Driver)
}

// TestLoginIsRequired: the broker refuses a wrong password and a client
// without one, and lets pslab's in.
func TestLoginIsRequired(t *testing.T) {
	_, ep, _ := startMosquitto(t)
	ctx := context.Background()
	require.NoError(t, mqtt.Check(ctx, ep, mqtt.V311))
	bad := ep
	bad.Password = "wrong"
	assert.ErrorIs(t, mqtt.Check(ctx, bad, mqtt.V311), mqtt.ErrLoginRefused)
	ext, err := broker.NewExternal(Name, ep.URL)
	require.NoError(t, err)
	open, detail, err := ext.OpenAccess(ctx, mqtt.Probe)
	require.NoError(t, err)
	assert.False(t, open, detail)
}

// TestEveryCombinationOnMosquitto runs every combination MQTT expresses
// through the load engine, with the persistence each case asks for and
// the broker's held count at the end.
func TestEveryCombinationOnMosquitto(t *testing.T) {
	for _, v := range []mqtt.Version{mqtt.V311, mqtt.V5} {
		t.Run(v.String(), func(t *testing.T) { everyCombination(t, v) })
	}
}

func everyCombination(t *testing.T, v mqtt.Version) {
	m, _, d := startMosquittoV(t, v)
	mqtttest.EveryCombination(t, d, "pslab-m", "mosquitto $SYS", func(t *testing.T, c scenario.Case) {
		assert.Equal(t, mqtt.QoS(c.Factors) > 0, m.Persistence(), "persistence per case")
	})
}

// TestHeldCountsWhatAnAbsentDurableSubscriberIsOwed: messages published
// while a durable QoS 1 subscriber is away stay in Mosquitto's store, and
// Held says how many.
func TestHeldCountsWhatAnAbsentDurableSubscriberIsOwed(t *testing.T) {
	_, _, d := startMosquitto(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := mqtttest.Case(scenario.Durable, scenario.Persistent, scenario.AckAuto)
	cs := driver.CaseSpec{Prefix: "pslab-held", Factors: c.Factors}
	require.NoError(t, d.Prepare(ctx, cs))
	spec := driver.SubSpec{Case: cs, ClientID: "pslab-held-c0"}
	sub, err := d.Subscriber(ctx, spec, func(driver.Delivery) {})
	require.NoError(t, err)
	require.NoError(t, sub.Close())
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: cs})
	require.NoError(t, err)
	for i := 0; i < 37; i++ {
		require.NoError(t, pub.Publish(ctx, driver.Message{Body: []byte(fmt.Sprint(i)), Sel: -1}))
	}
	require.NoError(t, pub.Flush(ctx))
	require.NoError(t, pub.Close())
	h, err := d.Held(ctx, cs)
	require.NoError(t, err)
	assert.EqualValues(t, 37, h.Backlog, h.Source)

	var got atomic.Int64
	sub, err = d.Subscriber(ctx, spec, func(driver.Delivery) { got.Add(1) })
	require.NoError(t, err)
	require.Eventually(t, func() bool { return got.Load() == 37 }, 10*time.Second, 10*time.Millisecond, "the session resumes with its backlog")
	require.NoError(t, sub.Close())
	require.NoError(t, d.Purge(ctx, "pslab-held"))
	h, err = d.Held(ctx, cs)
	require.NoError(t, err)
	assert.Zero(t, h.Backlog, "purged: %s", h.Source)
}

// TestStopRemovesTheRunDirectory and leftovers of a dead owner are removed.
func TestStopAndLeftovers(t *testing.T) {
	m, _, _ := startMosquitto(t)
	dir := m.Dir()
	require.DirExists(t, dir)
	require.NoError(t, m.Stop(context.Background()))
	assert.NoDirExists(t, dir)

	// A run directory whose owner is gone and whose broker still runs.
	m2 := New(Config{})
	_, err := m2.Start(context.Background(), broker.LoopbackHost{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m2.Stop(context.Background()) })
	dir2 := m2.Dir()
	require.NoError(t, os.WriteFile(filepath.Join(dir2, ownerFile), []byte("999999999\n"), 0o600))
	removed, err := Leftovers()
	require.NoError(t, err)
	require.Len(t, removed, 1)
	assert.Contains(t, removed[0], dir2)
	assert.NoDirExists(t, dir2)
	assert.Error(t, m2.Exited(), "the leftover broker was stopped")
}
