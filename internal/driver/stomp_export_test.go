package driver

import (
	"context"
	"encoding/json"
)

// Test hooks for the external STOMP integration tests (package driver_test).

// STOMPQueueNames lists the broker's queues whose names start with prefix.
func STOMPQueueNames(ctx context.Context, d Driver, prefix string) (names []string, err error) {
	err = d.(*stompDriver).withAdmin(ctx, func(a *stompAdmin) error {
		names, err = a.names(ctx, "getQueueNames", prefix)
		return err
	})
	return names, err
}

// STOMPConsumers counts the consumers the broker has on queue.
func STOMPConsumers(ctx context.Context, d Driver, queue string) (n int, err error) {
	err = d.(*stompDriver).withAdmin(ctx, func(a *stompAdmin) error {
		raw, err := a.invoke(ctx, "listAllConsumersAsJSON")
		if err != nil {
			return err
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		var all []map[string]any
		if err := json.Unmarshal([]byte(s), &all); err != nil {
			return err
		}
		for _, c := range all {
			if c["queueName"] == queue {
				n++
			}
		}
		return nil
	})
	return n, err
}

// AbortSTOMPSubscriber drops the subscriber's connection without ACKs or
// DISCONNECT, like a crashed client.
func AbortSTOMPSubscriber(s Subscriber) {
	sub := s.(*stompSub)
	sub.stopTimer()
	sub.link.abort()
}

// STOMPPendingAcks is the number of handled but unacknowledged messages.
func STOMPPendingAcks(s Subscriber) int {
	sub := s.(*stompSub)
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.nPending
}
