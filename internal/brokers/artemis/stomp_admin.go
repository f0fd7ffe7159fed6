package artemis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
)

// stompAdmin invokes Artemis management operations over STOMP: a SEND to
// the management address with _AMQ_ResourceName/_AMQ_OperationName headers
// and a JSON array of parameters as body; the reply goes to reply-to.
type stompAdmin struct {
	conn    *stompConn
	replyTo string
	replies chan *frame.Frame
	nextID  int
	tag     string
}

// stompAdminReply is the multicast address management replies go to; each
// admin connection has its own temporary subscription on it and matches
// replies by correlation-id.
const stompAdminReply = "pslab.admin.reply"

func dialAdmin(ctx context.Context, ep driver.Endpoint) (*stompAdmin, error) {
	var tag [6]byte
	rand.Read(tag[:])
	a := &stompAdmin{replyTo: stompAdminReply, replies: make(chan *frame.Frame, 16), tag: hex.EncodeToString(tag[:])}
	c, err := dialSTOMP(ctx, ep, "", func(f *frame.Frame) {
		select {
		case a.replies <- f:
		default: // nobody waits for it: a stale reply or another admin's
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	a.conn = c
	sub := frame.New(frame.SUBSCRIBE, frame.Id, "admin", frame.Destination, a.replyTo,
		"subscription-type", "MULTICAST", frame.Ack, "auto")
	// Bounded like every management call (invoke): a broker that holds its
	// post office lock forever (the Artemis 2.44 deadlock, docs/artemis.md)
	// never sends the receipt, and the caller must learn it.
	subCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.request(subCtx, sub, "admin-subscribed"); err != nil {
		c.Abort()
		return nil, fmt.Errorf("artemis management: subscribe to %s: %w", a.replyTo, err)
	}
	return a, nil
}

// close ends the admin connection: UNSUBSCRIBE from the reply address,
// then DISCONNECT (stomp_close.go), within wait.
func (a *stompAdmin) close(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	if a.conn.Failure() == nil {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := a.conn.unsubscribe(ctx, "admin")
		cancel()
		if err != nil {
			a.conn.Abort()
			return fmt.Errorf("artemis management: unsubscribe from %s: %w", a.replyTo, err)
		}
	}
	return a.conn.CloseBy(deadline)
}

// invoke calls operation op on the broker resource with params and returns
// the JSON result (the first element of the reply array).
func (a *stompAdmin) invoke(ctx context.Context, op string, params ...any) (json.RawMessage, error) {
	return a.invokeOn(ctx, "broker", op, params...)
}

// invokeOn calls operation op on the management resource named resource
// ("broker", "address.<name>", "queue.<name>").
func (a *stompAdmin) invokeOn(ctx context.Context, resource, op string, params ...any) (json.RawMessage, error) {
	body, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if params == nil {
		body = []byte("[]")
	}
	a.nextID++
	corr := fmt.Sprintf("pslab-%s-%d", a.tag, a.nextID)
	f := frame.New(frame.SEND,
		frame.Destination, "activemq.management",
		"destination-type", "ANYCAST",
		"_AMQ_ResourceName", resource,
		"_AMQ_OperationName", op,
		"reply-to", a.replyTo,
		"correlation-id", corr)
	f.Body = body
	if err := a.conn.writeFrame(f); err != nil {
		return nil, fmt.Errorf("artemis management %s: %w", op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		select {
		case r := <-a.replies:
			if r.Header.Get("correlation-id") != corr {
				continue
			}
			return parseManagementReply(op, r.Header.Get("_AMQ_OperationSucceeded"), r.Body)
		case <-a.conn.done:
			return nil, fmt.Errorf("artemis management %s: %w", op, a.conn.Failure())
		case <-ctx.Done():
			return nil, fmt.Errorf("artemis management %s: no reply: %w", op, ctx.Err())
		}
	}
}

// parseManagementReply unpacks the JSON array Artemis replies with.
func parseManagementReply(op, succeeded string, body []byte) (json.RawMessage, error) {
	if succeeded == "true" && len(strings.TrimSpace(string(body))) == 0 {
		return json.RawMessage("null"), nil // a void operation
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(body, &arr); err != nil || len(arr) == 0 {
		if succeeded != "true" {
			return nil, fmt.Errorf("artemis management %s failed: %s", op, strings.TrimSpace(string(body)))
		}
		return nil, fmt.Errorf("artemis management %s: unexpected reply %q", op, body)
	}
	if succeeded != "true" {
		var msg string
		if json.Unmarshal(arr[0], &msg) != nil {
			msg = string(arr[0])
		}
		return nil, fmt.Errorf("artemis management %s failed: %s", op, msg)
	}
	return arr[0], nil
}

func (a *stompAdmin) names(ctx context.Context, op, prefix string) ([]string, error) {
	raw, err := a.invoke(ctx, op)
	if err != nil {
		return nil, err
	}
	var all []string
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, fmt.Errorf("artemis management %s: %v", op, err)
	}
	return withPrefix(all, prefix), nil
}

// withPrefix returns the sorted names that start with prefix.
func withPrefix(all []string, prefix string) []string {
	var out []string
	for _, n := range all {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// withAdmin runs fn with the driver's admin connection, dialing it first
// if needed and dropping it when it failed.
func (d *stompDriver) withAdmin(ctx context.Context, fn func(*stompAdmin) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.admin != nil && d.admin.conn.Failure() != nil { // e.g. the broker restarted
		d.admin.close(0)
		d.admin = nil
	}
	if d.admin == nil {
		a, err := dialAdmin(ctx, d.ep.Admin())
		if err != nil {
			return err
		}
		d.admin = a
	}
	err := fn(d.admin)
	// A broken connection, or one the broker stopped answering on: the
	// next call dials a fresh one.
	if err != nil && (d.admin.conn.Failure() != nil || errors.Is(err, context.DeadlineExceeded)) {
		d.admin.close(time.Second)
		d.admin = nil
	}
	return err
}
