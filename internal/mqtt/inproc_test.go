package mqtt

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
)

// Hermetic tests run the driver against a real MQTT 3.1.1 broker in this
// process: nats-server's MQTT listener (JetStream on, a store in the
// test's temporary directory), no root and no child process.

// inproc is an in-process nats-server with its MQTT listener.
type inproc struct {
	t     *testing.T
	opts  *server.Options
	s     *server.Server
	ep    driver.Endpoint
	store string
}

// startInproc starts nats-server with MQTT on a free loopback port.
func startInproc(t *testing.T) *inproc {
	t.Helper()
	b := &inproc{t: t, store: t.TempDir()}
	port := freePort(t)
	b.opts = &server.Options{
		ServerName: "pslab-test", Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: b.store,
		NoLog: true, NoSigs: true,
		MQTT: server.MQTTOpts{Host: "127.0.0.1", Port: port, Username: "pslab", Password: "secret"},
	}
	b.start()
	b.ep = driver.Endpoint{URL: "mqtt://127.0.0.1:" + strconv.Itoa(port), User: "pslab", Password: "secret"}
	t.Cleanup(b.stop)
	return b
}

func (b *inproc) start() { require.NoError(b.t, b.tryStart()) }

// tryStart is start for goroutines other than the test's (a fault
// injector's), which must not call FailNow: it returns the error.
func (b *inproc) tryStart() error {
	s, err := server.NewServer(b.opts)
	if err != nil {
		return err
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return errors.New("nats-server not ready within 10 s")
	}
	b.s = s
	return nil
}

func (b *inproc) stop() {
	if b.s != nil {
		b.s.Shutdown()
		b.s.WaitForShutdown()
		b.s = nil
	}
}

// restart stops the server and starts it again on the same port and
// store (JetStream keeps the MQTT sessions and QoS 1/2 messages).
func (b *inproc) restart(down time.Duration) {
	b.stop()
	time.Sleep(down)
	b.start()
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// testProfile is a profile of the in-process broker (the registered
// nats-mqtt broker has its own, with its held count).
func testProfile() Profile {
	return Profile{Name: "nats-mqtt-test", Product: "nats-server " + server.VERSION + " MQTT listener", Version: V311,
		Persistence: "JetStream file storage", QoS0WhileAway: "not kept (nats-server)", InflightLimit: 1024, SurvivesKill: true,
		InflightSetting: "mqtt max_ack_pending"}
}

func newTestDriver(t *testing.T, b *inproc) *Driver {
	t.Helper()
	d, err := New(testProfile(), b.ep)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
