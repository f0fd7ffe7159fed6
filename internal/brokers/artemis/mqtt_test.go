package artemis

import (
	"context"
	"strconv"
	"sync"
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

// startMQTTArtemis starts artemis-mqtt on an instance of its own (heapMB
// of heap) on loopback, stopped when the test ends.
func startMQTTArtemis(t *testing.T, ctx context.Context, instance string, heapMB int) (*mqttArtemis, driver.Endpoint) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (Artemis) skipped in -short mode")
	}
	cfg := ArtemisConfig{Instance: instance, HeapMB: heapMB}
	for _, p := range []*int{&cfg.Port, &cfg.CorePort} {
		port, err := broker.FreePort()
		require.NoError(t, err)
		*p = port
	}
	a := NewArtemis(cfg)
	if !a.Installed() {
		if missing := a.NotAtHand(); missing != "" {
			t.Skipf("Artemis is not installed (%s): run `go run ./cmd/pslab broker install artemis`", missing)
		}
		require.NoError(t, a.Install(ctx, nil))
	}
	b := &mqttArtemis{Artemis: a}
	ep, err := b.Start(ctx, broker.LoopbackHost{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Stop(context.Background()) })
	require.NoError(t, mqtt.Check(ctx, ep, mqtt.V311))
	return b, ep
}

// TestMQTTEveryCombination runs every combination MQTT expresses through
// the load engine on artemis-mqtt (an instance of its own, on loopback):
// every due delivery arrives once, and the held count is read from the
// queues on the case's topics.
func TestMQTTEveryCombination(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, ep := startMQTTArtemis(t, ctx, "test-mqtt", 256)
	drv, err := MQTTDescriptor().NewDriver(ctx, ep)
	require.NoError(t, err)
	defer drv.Close()
	mqtttest.EveryCombination(t, drv, "pslab-am", "Artemis queues", nil)
}

// TestMQTTQoS0FlowControlWaitsForRouting is Gaddah & Kunz set 1 row 19
// over MQTT made certain: QoS 0 to 50 clean sessions whose clients read
// nothing (each handler blocks at its first delivery), 100,000 messages
// published. Artemis answers a PINGREQ at once, ahead of the PUBLISHes
// it has queued, so with PINGRESPs as the QoS 0 flow control the
// publisher "confirmed" its sends while Artemis had routed few of them
// (386,527 of the 5 million (message, queue) pairs when Flush returned,
// measured), the rest waiting on the heap; in row 19 that queue filled the 1 GiB JVM and the
// broker answered nothing more. With barriers (a QoS 1 PUBLISH whose
// PUBACK Artemis sends in order) every confirmed send has been routed to
// all 50 queues when Flush returns, and the broker answers a new CONNECT
// and management beside the backlog.
func TestMQTTQoS0FlowControlWaitsForRouting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, ep := startMQTTArtemis(t, ctx, "test-mqtt-flow", 256)
	drv, err := MQTTDescriptor().NewDriver(ctx, ep)
	require.NoError(t, err)
	defer drv.Close()

	const subs, msgs = 50, 100000
	c := driver.CaseSpec{Prefix: "pslab-test-flow" + strconv.FormatInt(time.Now().UnixNano()%(1<<24), 36),
		Factors: scenario.Factors{Publishers: 1, Subscribers: subs, Topics: 1, Model: scenario.FewToMany,
			Subscription: scenario.NonDurable, Delivery: scenario.NonPersistent, Ack: scenario.AckAuto,
			Body: scenario.BodyBytes, Size: 100}}
	require.NoError(t, drv.Prepare(ctx, c))
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	var got atomic.Int64
	var ss []driver.Subscriber
	for i := range subs {
		sub, err := drv.Subscriber(ctx, driver.SubSpec{Case: c, ID: i}, func(driver.Delivery) {
			got.Add(1)
			<-release
		})
		require.NoError(t, err)
		ss = append(ss, sub)
	}
	pub, err := drv.Publisher(ctx, driver.PubSpec{Case: c, Window: 1024})
	require.NoError(t, err)
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer pcancel()
	body := make([]byte, 100)
	for i := range msgs {
		require.NoError(t, pub.Publish(pctx, driver.Message{Body: body, Sel: -1}), "publish %d of %d: the broker stopped confirming", i, msgs)
	}
	require.NoError(t, pub.Flush(pctx), "the broker confirms every send")
	require.NoError(t, pub.Close())

	var held driver.Held
	d := &stompDriver{ep: b.stomp}
	defer d.Close()
	require.NoError(t, d.withAdmin(ctx, func(ad *stompAdmin) error {
		held, err = ad.held(ctx, mqtt.Root(c.Prefix)+".")
		return err
	}), "management answers beside the backlog")
	require.NotNil(t, held.Routed, "every subscription queue is there")
	assert.EqualValues(t, subs*msgs, *held.Routed, "confirmed sends are routed to every queue (held %d, handed over %d)", held.Backlog, got.Load())
	require.NoError(t, mqtt.Check(ctx, ep, mqtt.V311), "a new MQTT CONNECT is answered beside the backlog")

	// The sessions end with the broker (a purge of 50 queues of 100,000
	// messages each, paged, takes Artemis minutes on 2 cores).
	once.Do(func() { close(release) })
	for _, sub := range ss {
		sub.(driver.Aborter).Abort()
	}
}
