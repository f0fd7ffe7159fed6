package mqtt

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/body"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// BenchmarkPublishOnly drives pslab's MQTT publisher alone (the code path
// of every run: the load engine's stamped body, Publisher.Publish, Flush)
// against a real broker, the work mqtt-benchmark does: one client
// publishes b.N messages of PSLAB_MQTT_BENCH_SIZE bytes (default 100) on
// one topic and waits until the broker has confirmed them all. Nobody
// subscribes. Sub-benchmarks: QoS 0 with pslab's default window (a
// PINGREQ every 256 sends confirms the sends before it), QoS 1 one send
// at a time (stop-and-wait on each PUBACK, as mqtt-benchmark), QoS 1 with
// the default window (1024 unacknowledged sends). Reported beside ns/op:
// msgs/s (confirmed sends per second, connection set-up left out) and
// cpu-µs/msg (the process's user + system time over the loop, per send).
//
//	PSLAB_MQTT_BENCH_URL=mqtt://pslab:PASSWORD@127.0.0.1:1883 \
//	  go test -run '^$' -bench PublishOnly -benchtime 200000x ./internal/mqtt
//
// scripts/compare-mqtt-bench.sh runs it beside mqtt-benchmark on the same
// Mosquitto (results/mqtt-bench). Without the variable it is skipped.
func BenchmarkPublishOnly(b *testing.B) {
	raw := os.Getenv("PSLAB_MQTT_BENCH_URL")
	if raw == "" {
		b.Skip("PSLAB_MQTT_BENCH_URL (mqtt://user:password@host:port) names no broker")
	}
	u, err := url.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	ep := driver.Endpoint{URL: (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()}
	if u.User != nil {
		ep.User = u.User.Username()
		ep.Password, _ = u.User.Password()
	}
	size := 100
	if s := os.Getenv("PSLAB_MQTT_BENCH_SIZE"); s != "" {
		if size, err = strconv.Atoi(s); err != nil {
			b.Fatalf("PSLAB_MQTT_BENCH_SIZE=%q: %v", s, err)
		}
	}
	d, err := New(Profile{Name: "mqtt-bench", Version: V311}, ep)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		del    scenario.Delivery
		window int // 0: the lab's default
	}{
		{"qos0-window", scenario.NonPersistent, 0},
		{"qos1-stop-and-wait", scenario.Persistent, 1},
		{"qos1-window", scenario.Persistent, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne,
				Subscription: scenario.NonDurable, Delivery: bc.del, Ack: scenario.AckAuto,
				Body: scenario.BodyBytes, Size: size}
			benchPublish(b, d, f, bc.window)
		})
	}
}

func benchPublish(b *testing.B, d *Driver, f scenario.Factors, window int) {
	elapsed, cpu, err := publishOnly(d, f, window, b.N, b.ResetTimer)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/msg")
}

// publishOnly publishes n stamped messages of f through one publisher of
// d with window (0: the default) and waits until the broker has confirmed
// them all; started is called once connected. It returns the time from
// the first send to the last confirmation and the process's CPU time over
// it; a lost connection is an error.
func publishOnly(d *Driver, f scenario.Factors, window, n int, started func()) (time.Duration, time.Duration, error) {
	ctx := context.Background()
	cs := driver.CaseSpec{Prefix: "pslab-bench-" + randomID(), Factors: f}
	if err := d.Prepare(ctx, cs); err != nil {
		return 0, 0, err
	}
	defer d.Purge(ctx, cs.Prefix)
	p, err := d.Publisher(ctx, driver.PubSpec{Case: cs, Window: window})
	if err != nil {
		return 0, 0, err
	}
	defer p.Close()
	enc, err := body.NewEncoder(f.Body, f.Size, 1)
	if err != nil {
		return 0, 0, err
	}
	var buf []byte
	cpu0, err := processCPU()
	if err != nil {
		return 0, 0, err
	}
	started()
	start := time.Now()
	for i := range n {
		buf = enc.Encode(buf, body.Stamp{Publisher: 0, Seq: uint64(i + 1), SentNanos: time.Now().UnixNano(), Sel: -1})
		if err := p.Publish(ctx, driver.Message{Body: buf, Sel: -1}); err != nil {
			return 0, 0, err
		}
	}
	if err := p.Flush(ctx); err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(start)
	cpu1, err := processCPU()
	if err != nil {
		return 0, 0, err
	}
	if st := p.(driver.ConnReporter).ConnStats(); len(st.Outages) > 0 || st.InDoubt > 0 {
		return 0, 0, fmt.Errorf("the connection was lost during the benchmark: %+v", st)
	}
	return elapsed, cpu1 - cpu0, nil
}

// TestPublishOnlyConfirmsEverySend runs the benchmark's publisher on the
// in-process broker in each sub-benchmark's mode (QoS 0 and 1, the
// default window and one send at a time): Flush returns with every send
// confirmed and no connection lost.
func TestPublishOnlyConfirmsEverySend(t *testing.T) {
	b := startInproc(t)
	d := newTestDriver(t, b)
	for _, del := range []scenario.Delivery{scenario.NonPersistent, scenario.Persistent} {
		for _, window := range []int{0, 1} {
			f := scenario.Factors{Publishers: 1, Subscribers: 1, Topics: 1, Model: scenario.OneToOne,
				Subscription: scenario.NonDurable, Delivery: del, Ack: scenario.AckAuto, Body: scenario.BodyBytes, Size: 100}
			const n = 500
			called := false
			_, _, err := publishOnly(d, f, window, n, func() { called = true })
			require.NoError(t, err, "%s window %d", del, window)
			assert.True(t, called)
		}
	}
}

// processCPU is the process's user + system time so far.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
