package artemis

import (
	"context"
	"fmt"
	"strings"
	"time"

	"pslab/internal/driver"
)

// purgeMargin is how much longer than Artemis' connection TTL a purge
// waits for the consumers and temporary queues of closed connections to
// go (purgeBound).
const purgeMargin = 10 * time.Second

// purgeBound bounds how long a purge waits: longer than the connection TTL
// Artemis gives the clients of ep (twice their heart-beat: 20 s, or 2 min
// on a shaped link), so a connection that vanished without a FIN or RST
// (an RST lost on the emulated link) is expired by then. With a 30 s
// bound and the 2 min TTL, one of four Artemis wifi-paper records of set
// 1 ended with its purge refused (AMQ229025, a consumer still there).
func purgeBound(ep driver.Endpoint) time.Duration { return connectionTTL(ep) + purgeMargin }

// purgeBackoff is the first pause between purge passes; it doubles up to
// a second.
const purgeBackoff = 50 * time.Millisecond

// purge destroys the queues (durable subscriptions) and then the addresses
// whose names start with prefix. It never removes consumers or bindings by
// force: destroyQueue(name, false) and deleteAddress(name, false) refuse
// while a consumer or a queue remains (AMQ229025, AMQ229205), and the pass
// is repeated, with a back-off, until the broker has torn down what the
// closed connections left, for up to bound. A forced delete would
// send the consumer's connection an ERROR while that connection may be
// failing, which deadlocks Artemis 2.44 (stomp_close.go, docs/artemis.md).
func (a *stompAdmin) purge(ctx context.Context, prefix string, bound time.Duration) error {
	start := time.Now()
	pause := purgeBackoff
	for {
		busy, err := a.purgePass(ctx, prefix)
		if err != nil || busy == nil {
			return err
		}
		if time.Since(start) >= bound {
			return fmt.Errorf("artemis purge of %s*: still in use after %.0f s: %w", prefix, bound.Seconds(), busy)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("artemis purge of %s*: %w (still in use: %v)", prefix, ctx.Err(), busy)
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// purgePass tries once to delete every queue and address of prefix. busy
// is the first refusal because something was still in use; err is any
// other failure.
func (a *stompAdmin) purgePass(ctx context.Context, prefix string) (busy, err error) {
	queues, err := a.names(ctx, "getQueueNames", prefix)
	if err != nil {
		return nil, err
	}
	for _, q := range queues {
		if _, err := a.invoke(ctx, "destroyQueue", q, false); err != nil && !isNotExist(err) {
			if !isInUse(err) {
				return nil, err
			}
			if busy == nil {
				busy = err
			}
		}
	}
	addrs, err := a.names(ctx, "getAddressNames", prefix)
	if err != nil {
		return nil, err
	}
	for _, ad := range addrs {
		if ad == a.replyTo {
			continue // our own reply address
		}
		if _, err := a.invoke(ctx, "deleteAddress", ad, false); err != nil && !isNotExist(err) {
			if !isInUse(err) {
				return nil, err
			}
			if busy == nil {
				busy = err
			}
		}
	}
	return busy, nil
}

// isNotExist: the queue or address went away on its own meanwhile (a
// temporary queue whose subscriber just disconnected).
func isNotExist(err error) bool {
	s := err.Error()
	return strings.Contains(s, "AMQ229017") || strings.Contains(s, "AMQ229203") ||
		strings.Contains(strings.ToLower(s), "does not exist")
}

// isInUse: a non-forced delete refused because a queue still has
// consumers (AMQ229025) or an address still has queues (AMQ229205).
func isInUse(err error) bool {
	s := err.Error()
	return strings.Contains(s, "AMQ229025") || strings.Contains(s, "AMQ229205") ||
		strings.Contains(s, "it has consumers") || strings.Contains(s, "has bindings")
}
