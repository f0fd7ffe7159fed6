package artemis

import (
	"context"

	"pslab/internal/driver"
)

// Test hooks for the external STOMP integration tests (package artemis_test).

// STOMPQueueNames lists the broker's queues whose names start with prefix.
func STOMPQueueNames(ctx context.Context, d driver.Driver, prefix string) (names []string, err error) {
	err = d.(*stompDriver).withAdmin(ctx, func(a *stompAdmin) error {
		names, err = a.names(ctx, "getQueueNames", prefix)
		return err
	})
	return names, err
}

// STOMPConsumers counts the consumers the broker has on queue, by the
// queue's own consumerCount. (The broker-wide listAllConsumersAsJSON is not
// used: Artemis 2.44 fails it with a NullPointerException while a consumer
// of any queue is being closed, which made the test that waits for a
// detach flaky.)
func STOMPConsumers(ctx context.Context, d driver.Driver, queue string) (n int, err error) {
	err = d.(*stompDriver).withAdmin(ctx, func(a *stompAdmin) error {
		return a.call(ctx, "queue."+queue, "getConsumerCount", &n)
	})
	return n, err
}

// AbortSTOMPSubscriber drops the subscriber's connection without ACKs or
// DISCONNECT, like a crashed client.
func AbortSTOMPSubscriber(s driver.Subscriber) {
	sub := s.(*stompSub)
	sub.stopTimer()
	sub.link.Abort()
}

// STOMPPendingAcks is the number of handled but unacknowledged messages.
func STOMPPendingAcks(s driver.Subscriber) int {
	sub := s.(*stompSub)
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.nPending
}
