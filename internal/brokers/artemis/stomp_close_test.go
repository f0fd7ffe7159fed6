package artemis

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// TestCloseOrder: a non-durable subscriber's Close sends UNSUBSCRIBE
// (confirmed) and then DISCONNECT without a receipt, and returns once the
// broker has closed the stream: the order that cannot deadlock Artemis
// 2.44 (stomp_close.go).
func TestCloseOrder(t *testing.T) {
	s := newFakeSTOMP(t, false)
	d, _ := NewSTOMP(s.endpoint())
	sub, err := d.Subscriber(context.Background(), driver.SubSpec{Case: driver.CaseSpec{Prefix: "pslab-t", Factors: baseFactors()}},
		func(driver.Delivery) {})
	if err != nil {
		t.Fatal(err)
	}
	s.nextOf(frame.SUBSCRIBE)
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	var cmds []string
	var unsub, disc *frame.Frame
	for disc == nil {
		fr := s.next()
		cmds = append(cmds, fr.Command)
		switch fr.Command {
		case frame.UNSUBSCRIBE:
			unsub = fr
		case frame.DISCONNECT:
			disc = fr
		}
	}
	if strings.Join(cmds, ",") != "UNSUBSCRIBE,DISCONNECT" {
		t.Errorf("frames on Close: %v, want UNSUBSCRIBE,DISCONNECT", cmds)
	}
	if unsub.Header.Get(frame.Id) != "0" || unsub.Header.Get(frame.Receipt) == "" {
		t.Errorf("UNSUBSCRIBE headers %v: want id 0 and a receipt", unsub.Header)
	}
	if _, ok := disc.Header.Contains(frame.Receipt); ok {
		t.Error("DISCONNECT asks for a receipt (ARTEMIS-5874)")
	}
}

// TestCloseDurableKeepsSubscription: a durable subscriber's Close sends
// no UNSUBSCRIBE (the subscription stays, and Artemis marks what it
// returns as redelivered), only DISCONNECT without a receipt.
func TestCloseDurableKeepsSubscription(t *testing.T) {
	s, sub := durableOnFake(t)
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	fr := s.next()
	if fr.Command != frame.DISCONNECT {
		t.Fatalf("first frame on a durable Close: %s, want DISCONNECT", fr.Command)
	}
	if _, ok := fr.Header.Contains(frame.Receipt); ok {
		t.Error("DISCONNECT asks for a receipt (ARTEMIS-5874)")
	}
}

// durableOnFake is a subscribed durable subscriber on a fake broker.
func durableOnFake(t *testing.T) (*fakeSTOMP, driver.Subscriber) {
	t.Helper()
	s := newFakeSTOMP(t, false)
	d, _ := NewSTOMP(s.endpoint())
	f := baseFactors()
	f.Subscription = scenario.Durable
	sub, err := d.Subscriber(context.Background(), driver.SubSpec{Case: driver.CaseSpec{Prefix: "pslab-t", Factors: f},
		ClientID: "pslab-t-c1", DurableName: "d1"}, func(driver.Delivery) {})
	if err != nil {
		t.Fatal(err)
	}
	s.nextOf(frame.SUBSCRIBE)
	return s, sub
}

// TestUnsubscribeNamesDurable: Unsubscribe deletes the durable
// subscription (its UNSUBSCRIBE carries the name) and its DISCONNECT has
// no receipt either.
func TestUnsubscribeNamesDurable(t *testing.T) {
	s, sub := durableOnFake(t)
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if got := s.nextOf(frame.UNSUBSCRIBE).Header.Get("durable-subscription-name"); got != "d1" {
		t.Errorf("UNSUBSCRIBE durable-subscription-name %q, want d1", got)
	}
	if _, ok := s.nextOf(frame.DISCONNECT).Header.Contains(frame.Receipt); ok {
		t.Error("DISCONNECT asks for a receipt")
	}
}

// TestCloseBrokerKeepsOpen: a broker that never closes the connection
// after DISCONNECT makes close report it once its bound has passed.
func TestCloseBrokerKeepsOpen(t *testing.T) {
	s := newFakeSTOMP(t, false)
	s.keepOpen = true
	c, err := dialSTOMP(context.Background(), s.endpoint(), "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = c.close(50 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not close the connection") {
		t.Fatalf("close = %v, want the broker's missing close reported", err)
	}
	if _, ok := s.nextOf(frame.DISCONNECT).Header.Contains(frame.Receipt); ok {
		t.Error("DISCONNECT asks for a receipt")
	}
}

// TestBrokerErrorBrokerClosesFirst: after an ERROR frame the client keeps
// its socket open for the broker to close (a client that closes first can
// deadlock Artemis 2.44), and the ERROR is the connection's failure.
func TestBrokerErrorBrokerClosesFirst(t *testing.T) {
	old := errorCloseWait
	errorCloseWait = time.Hour // only the broker's close can end the connection
	t.Cleanup(func() { errorCloseWait = old })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	result := make(chan error, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			result <- err
			return
		}
		defer nc.Close()
		r, w := frame.NewReader(nc), frame.NewWriter(nc)
		if _, err := r.Read(); err != nil { // CONNECT
			result <- err
			return
		}
		w.Write(frame.New(frame.CONNECTED, frame.Version, "1.2"))
		w.Write(frame.New(frame.ERROR, frame.Message, "AMQ339001 test"))
		// The client must still be there: a read times out rather than
		// ending with EOF or a reset.
		nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		var ne net.Error
		if _, err := r.Read(); !errors.As(err, &ne) || !ne.Timeout() {
			result <- errors.New("the client closed its socket after the ERROR: " + errorString(err))
			return
		}
		result <- nil
	}()
	c, err := dialSTOMP(context.Background(), driver.Endpoint{URL: "stomp://" + ln.Addr().String()}, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-result; err != nil {
		t.Fatal(err)
	}
	<-c.done
	var se *stompError
	if !errors.As(c.Failure(), &se) || se.msg != "AMQ339001 test" {
		t.Errorf("failure %v, want the broker's ERROR", c.Failure())
	}
	select {
	case <-c.readDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the reader did not end after the broker closed the connection")
	}
}

func errorString(err error) string {
	if err == nil {
		return "no error (a frame)"
	}
	return err.Error()
}
