package artemis

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
)

func baseFactors() scenario.Factors {
	return drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
}

func TestSTOMPAddr(t *testing.T) {
	for in, want := range map[string]string{
		"stomp://127.0.0.1:61613": "127.0.0.1:61613",
		"stomp://10.77.2.2":       "10.77.2.2:61613",
		"stomp://[::1]:1234":      "[::1]:1234",
	} {
		if got, err := stompAddr(in); got != want || err != nil {
			t.Errorf("stompAddr(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"nats://127.0.0.1:4222", "127.0.0.1:61613", "stomp://", "%"} {
		if _, err := stompAddr(bad); err == nil {
			t.Errorf("stompAddr(%q) accepted", bad)
		}
	}
	if _, err := NewSTOMP(driver.Endpoint{URL: "tcp://x:1"}); err == nil {
		t.Error("NewSTOMP accepted a tcp:// URL")
	}
}

func TestSendFrameBytes(t *testing.T) {
	p := sendPrefix("pslab-r1-c01.t0", true)
	h := appendSendHeaders(nil, 37, 5, 0)
	want := "SEND\ndestination:pslab-r1-c01.t0\ndestination-type:MULTICAST\npersistent:true\nsel:37\ncontent-length:5\n\n"
	if got := string(p) + string(h); got != want {
		t.Errorf("SEND frame head:\n%q\nwant\n%q", got, want)
	}
	h = appendSendHeaders(nil, -1, 100, 12)
	if got := string(h); got != "content-length:100\nreceipt:p12\n\n" {
		t.Errorf("headers without selector, with receipt: %q", got)
	}
	if !strings.Contains(string(sendPrefix("x", false)), "persistent:false\n") {
		t.Error("non-persistent SEND lacks persistent:false")
	}
}

func TestSelectorString(t *testing.T) {
	if s := stompSelector(20, 40); s != "convert_string_expressions:sel >= 20 AND sel < 40" {
		t.Errorf("stompSelector = %q", s)
	}
}

func TestSubscribeFrame(t *testing.T) {
	f := baseFactors()
	f.Subscription, f.Selector, f.Ack = scenario.Durable, true, scenario.AckClient
	s := driver.SubSpec{Case: driver.CaseSpec{Prefix: "pslab-x-c02", Factors: f}, ID: 3, Topic: 1,
		DurableName: "dur3", ClientID: "client3", SelectFrom: 40, SelectTo: 60}
	fr := subscribeFrame(s, stompAckPolicyFor(f.Ack, 0, 0))
	for k, want := range map[string]string{
		"destination":               "pslab-x-c02.t1",
		"subscription-type":         "MULTICAST",
		"ack":                       "client",
		"durable-subscription-name": "dur3",
		"selector":                  "convert_string_expressions:sel >= 40 AND sel < 60",
		"consumer-window-size":      strconv.Itoa(stompWindowBytes),
	} {
		if got := fr.Header.Get(k); got != want {
			t.Errorf("SUBSCRIBE %s = %q, want %q", k, got, want)
		}
	}
	if got := stompClientID(s); got != "pslab-x-c02.client3" {
		t.Errorf("client-id %q does not start with the case prefix", got)
	}
	s.ClientID = "pslab-x-c02-sub3"
	if got := stompClientID(s); got != "pslab-x-c02-sub3" {
		t.Errorf("prefixed client-id changed: %q", got)
	}
	s.Case.Factors = baseFactors()
	fr = subscribeFrame(s, stompAckPolicyFor(scenario.AckAuto, 0, 0))
	for _, k := range []string{"durable-subscription-name", "selector"} {
		if _, ok := fr.Header.Contains(k); ok {
			t.Errorf("non-durable, unselected SUBSCRIBE has %s", k)
		}
	}
	if fr.Header.Get("ack") != "client-individual" {
		t.Errorf("AUTO maps to ack:%s", fr.Header.Get("ack"))
	}
}

func TestAckPolicy(t *testing.T) {
	p := stompAckPolicyFor(scenario.AckAuto, 50, 50)
	if p.mode != "client-individual" || p.every != 1 || p.interval != 0 || !p.flushClose {
		t.Errorf("AUTO policy %+v", p)
	}
	p = stompAckPolicyFor(scenario.AckDupsOK, 0, 0)
	if p.mode != "client" || p.every != driver.DefaultAckEvery || p.interval != driver.DefaultAckIntervalMs*time.Millisecond || !p.flushClose {
		t.Errorf("DUPS_OK policy %+v", p)
	}
	p = stompAckPolicyFor(scenario.AckClient, 7, 300)
	if p.mode != "client" || p.every != 7 || p.interval != 0 || p.flushClose {
		t.Errorf("CLIENT policy %+v", p)
	}
}

func TestReceiptEvery(t *testing.T) {
	for w, k := range map[int]int{1: 1, 3: 1, 4: 1, 8: 2, 1000: 250} {
		if got := stompReceiptEvery(w); got != k {
			t.Errorf("stompReceiptEvery(%d) = %d, want %d", w, got, k)
		}
	}
}

func TestSupports(t *testing.T) {
	d, _ := NewSTOMP(driver.Endpoint{URL: "stomp://127.0.0.1:1"})
	for _, sub := range scenario.Subscriptions {
		for _, del := range scenario.Deliveries {
			for _, ack := range scenario.AckModes {
				for _, body := range scenario.BodyTypes {
					for _, sel := range []bool{false, true} {
						f := baseFactors()
						f.Subscription, f.Delivery, f.Ack, f.Body, f.Selector = sub, del, ack, body, sel
						err := d.Supports(f)
						if ack == scenario.AckExactlyOnce { // MQTT's QoS 2: STOMP has no such handshake
							if !errors.Is(err, driver.ErrUnsupported) {
								t.Errorf("%v: want a refusal, got %v", f, err)
							}
							continue
						}
						if err != nil {
							t.Errorf("%v refused: %v", f, err)
						}
					}
				}
			}
		}
	}
	bad := []func(*scenario.Factors){
		func(f *scenario.Factors) { f.Ack = "transacted" },
		func(f *scenario.Factors) { f.Subscription = "shared" },
		func(f *scenario.Factors) { f.Delivery = "maybe" },
		func(f *scenario.Factors) { f.Body = "xml" },
		func(f *scenario.Factors) { f.Topics = 0 },
		func(f *scenario.Factors) { f.Size = -1 },
	}
	for i, mod := range bad {
		f := baseFactors()
		mod(&f)
		err := d.Supports(f)
		if !errors.Is(err, driver.ErrUnsupported) {
			t.Errorf("case %d (%v): err = %v, want ErrUnsupported", i, f, err)
		}
	}
}

func TestMechanism(t *testing.T) {
	d, _ := NewSTOMP(driver.Endpoint{URL: "stomp://127.0.0.1:1"})
	f := baseFactors()
	f.Subscription, f.Delivery, f.Ack, f.Selector = scenario.Durable, scenario.Persistent, scenario.AckDupsOK, true
	m := d.Mechanism(f)
	for _, want := range []string{"durable-subscription-name", "client-id", "persistent:true", "RECEIPT",
		"ack:client, cumulative", "convert_string_expressions", "MULTICAST"} {
		if !strings.Contains(m, want) {
			t.Errorf("Mechanism(%v) lacks %q:\n%s", f, want, m)
		}
	}
	m = d.Mechanism(baseFactors())
	for _, want := range []string{"without a name", "persistent:false", "ack:client-individual"} {
		if !strings.Contains(m, want) {
			t.Errorf("Mechanism(base) lacks %q:\n%s", want, m)
		}
	}
	if strings.Contains(m, "selector") {
		t.Errorf("Mechanism without selector mentions one:\n%s", m)
	}
	f = baseFactors()
	f.Ack = scenario.AckClient
	if m := d.Mechanism(f); !strings.Contains(m, "CLIENT = ack:client") || !strings.Contains(m, "redelivered") {
		t.Errorf("Mechanism(CLIENT):\n%s", m)
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"pslab-r1a2b-c03", "a.b_c-D9"} {
		if err := checkName(ok); err != nil {
			t.Errorf("checkName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a:b", "a\nb", "a#", "a*", "a/b"} {
		if err := checkName(bad); err == nil {
			t.Errorf("checkName(%q) accepted", bad)
		}
	}
}

func TestManagementReply(t *testing.T) {
	raw, err := parseManagementReply("getQueueNames", "true", []byte(`[["a","b"]]`))
	if err != nil || string(raw) != `["a","b"]` {
		t.Errorf("reply = %s, %v", raw, err)
	}
	_, err = parseManagementReply("destroyQueue", "false", []byte(`["AMQ229017: Queue x does not exist"]`))
	if err == nil || !strings.Contains(err.Error(), "AMQ229017") || !isNotExist(err) {
		t.Errorf("failed reply: %v", err)
	}
	if raw, err := parseManagementReply("destroyQueue", "true", nil); err != nil || string(raw) != "null" {
		t.Errorf("void reply = %s, %v", raw, err)
	}
	if _, err := parseManagementReply("destroyQueue", "false", nil); err == nil {
		t.Error("failed void reply accepted")
	}
	if _, err := parseManagementReply("x", "true", []byte(`nope`)); err == nil {
		t.Error("garbage reply accepted")
	}
	if got := withPrefix([]string{"p.b", "q", "p.a", "xp"}, "p."); strings.Join(got, ",") != "p.a,p.b" {
		t.Errorf("withPrefix = %v", got)
	}
}

func TestLoginRefusedFake(t *testing.T) {
	s := newFakeSTOMP(t, false)
	ep := s.endpoint()
	ep.Password = "wrong"
	_, err := CheckSTOMP(context.Background(), ep)
	if !errors.Is(err, ErrLoginRefused) {
		t.Fatalf("wrong password: %v", err)
	}
	if !strings.Contains(err.Error(), `user "u"`) {
		t.Errorf("error does not name the user: %v", err)
	}
}

// The publisher never has more than Window sends unconfirmed, and resumes
// as receipts arrive.
func TestPublisherWindow(t *testing.T) {
	s := newFakeSTOMP(t, true)
	d, _ := NewSTOMP(s.endpoint())
	ctx := context.Background()
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: driver.CaseSpec{Prefix: "pslab-t", Factors: baseFactors()}, Window: 8})
	if err != nil {
		t.Fatal(err)
	}
	var published atomic.Int64
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 40; i++ {
			if err := pub.Publish(ctx, driver.Message{Body: []byte("x"), Sel: -1}); err != nil {
				done <- err
				return
			}
			published.Add(1)
		}
		done <- nil
	}()
	receipts := 0
	for i := 1; i <= 8; i++ {
		f := s.nextOf(frame.SEND)
		if _, ok := f.Header.Contains(frame.Receipt); ok {
			receipts++
		}
	}
	if receipts != 4 {
		t.Fatalf("%d receipts requested on 8 sends with window 8, want 4 (k=2)", receipts)
	}
	// The 8 sends return (the server has read them; wait for the
	// counter, however slow the machine), then a correct publisher stays
	// blocked however long the wait.
	settle := func(want int64) int64 {
		for deadline := time.Now().Add(10 * time.Second); published.Load() < want && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		return published.Load()
	}
	if n := settle(8); n != 8 {
		t.Fatalf("%d sends returned with 8 unconfirmed and window 8", n)
	}
	s.release(1) // confirms sends 1-2: two more may go
	s.nextOf(frame.SEND)
	s.nextOf(frame.SEND)
	if n := settle(10); n != 10 {
		t.Fatalf("%d sends returned after confirming 2 of 8, want 10", n)
	}
	// From now on answer every receipt as it comes.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				s.mu.Lock()
				n := len(s.pending)
				s.mu.Unlock()
				s.release(n)
			}
		}
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pub.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestPublisherWindowDefault(t *testing.T) {
	s := newFakeSTOMP(t, false)
	d, _ := NewSTOMP(s.endpoint())
	ctx := context.Background()
	cs := driver.CaseSpec{Prefix: "pslab-t", Factors: baseFactors()}
	if _, err := d.Publisher(ctx, driver.PubSpec{Case: cs, Window: -1}); err == nil {
		t.Error("negative window accepted")
	}
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: cs})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	want := driver.DefaultWindow(cs.Factors)
	if p := pub.(*stompPub); p.window != uint64(want) || p.every != uint64(stompReceiptEvery(want)) {
		t.Errorf("window 0 became %d, k %d", p.window, p.every)
	}
}

// Flush after a send without a receipt confirms through BEGIN/ABORT.
func TestPublisherFlushMarker(t *testing.T) {
	s := newFakeSTOMP(t, false)
	d, _ := NewSTOMP(s.endpoint())
	ctx := context.Background()
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: driver.CaseSpec{Prefix: "pslab-t", Factors: baseFactors()}, Window: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := pub.Publish(ctx, driver.Message{Body: []byte("x"), Sel: -1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	s.nextOf(frame.BEGIN)
	if f := s.next(); f.Command != frame.ABORT || f.Header.Get(frame.Receipt) == "" {
		t.Fatalf("flush marker: %s %v", f.Command, f.Header)
	}
	pub.Close()
}

// Each ack mode sends the ACK frames it should, on the wire.
func TestSubscriberAcks(t *testing.T) {
	for _, tc := range []struct {
		ack       scenario.AckMode
		every     int
		wantAcked []string // ack ids after 25 messages and Close
	}{
		{scenario.AckAuto, 0, nil}, // nil: every id
		{scenario.AckClient, 10, []string{"a10", "a20"}},
		{scenario.AckDupsOK, 10, []string{"a10", "a20", "a25"}},
	} {
		t.Run(string(tc.ack), func(t *testing.T) {
			s := newFakeSTOMP(t, false)
			d, _ := NewSTOMP(s.endpoint())
			f := baseFactors()
			f.Ack = tc.ack
			var mu sync.Mutex
			got := 0
			sub, err := d.Subscriber(context.Background(), driver.SubSpec{Case: driver.CaseSpec{Prefix: "pslab-t", Factors: f},
				AckEvery: tc.every, AckIntervalMs: 3600 * 1000}, func(driver.Delivery) { mu.Lock(); got++; mu.Unlock() })
			if err != nil {
				t.Fatal(err)
			}
			s.nextOf(frame.SUBSCRIBE)
			for i := 1; i <= 25; i++ {
				m := frame.New(frame.MESSAGE, frame.Subscription, "0", frame.Ack, "a"+strconv.Itoa(i),
					frame.ContentLength, "1")
				m.Body = []byte("x")
				s.write(m)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				n := got
				mu.Unlock()
				if n == 25 || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Millisecond)
			}
			var acked []string
			go sub.Close()
			for {
				fr := s.next()
				if fr.Command == frame.DISCONNECT {
					break
				}
				if fr.Command == frame.ACK {
					acked = append(acked, fr.Header.Get(frame.Id))
				}
			}
			want := tc.wantAcked
			if want == nil {
				for i := 1; i <= 25; i++ {
					want = append(want, "a"+strconv.Itoa(i))
				}
			}
			if strings.Join(acked, ",") != strings.Join(want, ",") {
				t.Errorf("ACK ids %v, want %v", acked, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if got != 25 {
				t.Errorf("handler saw %d messages, want 25", got)
			}
		})
	}
}

// TestHeartBeatFollowsTheStallTolerance: a STOMP client promises half its
// endpoint's stall tolerance as its heart-beat (Artemis' connection TTL is
// twice the heart-beat), 10 s without one; Mechanism says which.
func TestHeartBeatFollowsTheStallTolerance(t *testing.T) {
	if hb := heartBeatFor(driver.Endpoint{}); hb != 10*time.Second {
		t.Errorf("default heart-beat %s, want 10s", hb)
	}
	ep := driver.Endpoint{URL: "stomp://127.0.0.1:61613", StallTolerance: 2 * time.Minute}
	if hb := heartBeatFor(ep); hb != time.Minute {
		t.Errorf("heart-beat %s for a 2 min stall tolerance, want 1m", hb)
	}
	d, err := NewSTOMP(ep)
	if err != nil {
		t.Fatal(err)
	}
	if m := d.Mechanism(scenario.Factors{}); !strings.Contains(m, "heart-beat:60000,0 (Artemis closes a connection that sends nothing for 2m0s)") {
		t.Errorf("mechanism does not name the heart-beat: %s", m)
	}
}

// countingDialer dials TCP and counts the writes on the connections it
// made.
type countingDialer struct{ writes atomic.Int64 }

func (d *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, d: d}, nil
}

type countingConn struct {
	net.Conn
	d *countingDialer
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.d.writes.Add(1)
	return c.Conn.Write(b)
}

// TestPublisherCoalescesWrites: SEND frames published back to back (an
// open-loop batch) leave in a few writes, not one each, in order, and a
// flush's receipt marker follows them all.
func TestPublisherCoalescesWrites(t *testing.T) {
	s := newFakeSTOMP(t, false)
	ep := s.endpoint()
	dial := &countingDialer{}
	ep.Dialer = dial
	d, _ := NewSTOMP(ep)
	ctx := context.Background()
	pub, err := d.Publisher(ctx, driver.PubSpec{Case: driver.CaseSpec{Prefix: "pslab-t", Factors: baseFactors()}, Window: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	// One P, as the load client on its own core: the flusher runs when the
	// publisher stops.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	before := dial.writes.Load()
	const n = 200
	for i := range n {
		if err := pub.Publish(ctx, driver.Message{Body: []byte{byte(i)}, Sel: -1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w := dial.writes.Load() - before; w > n/10 {
		t.Errorf("%d writes for %d sends and a flush: not coalesced", w, n)
	}
	for i := range n {
		f := s.next()
		if f.Command != frame.SEND || len(f.Body) != 1 || f.Body[0] != byte(i) {
			t.Fatalf("frame %d: %s %q, want SEND %d in order", i, f.Command, f.Body, i)
		}
	}
	if f := s.next(); f.Command != frame.BEGIN {
		t.Fatalf("after the sends: %s, want the flush's BEGIN", f.Command)
	}
}
