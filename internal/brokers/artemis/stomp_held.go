package artemis

import (
	"context"
	"encoding/json"
	"fmt"

	"pslab/internal/driver"
)

// Held implements HeldReporter: the message count of every queue bound to
// the case's addresses (durable subscription queues and the temporary
// queues of non-durable subscribers), by Artemis management. Artemis'
// messageCount already includes the messages being delivered
// (deliveringCount), so the two are not added; Delivering reports the
// latter on its own. Routed is the queues' messagesAdded, each read after
// the queue's messageCount.
func (d *stompDriver) Held(ctx context.Context, c driver.CaseSpec) (driver.Held, error) {
	var h driver.Held
	err := d.withAdmin(ctx, func(a *stompAdmin) error {
		var err error
		h, err = a.held(ctx, c.Prefix)
		return err
	})
	return h, err
}

// held is what the queues bound to the addresses whose names start with
// prefix hold (STOMP's case addresses, artemis-mqtt's topics).
func (a *stompAdmin) held(ctx context.Context, prefix string) (driver.Held, error) {
	h := driver.Held{Source: "Artemis queues on the case's addresses: messageCount (deliveringCount included); routed: messagesAdded"}
	var routed int64
	gone := false // a queue went away while asked: its messagesAdded is not known
	addrs, err := a.names(ctx, "getAddressNames", prefix)
	if err != nil {
		return h, err
	}
	for _, ad := range addrs {
		var queues []string
		if err := a.call(ctx, "address."+ad, "getQueueNames", &queues); err != nil {
			if isNotExist(err) {
				gone = true
				continue
			}
			return h, err
		}
		for _, q := range queues {
			var count, delivering, added int64
			err := a.call(ctx, "queue."+q, "getMessageCount", &count)
			if err == nil {
				err = a.call(ctx, "queue."+q, "getDeliveringCount", &delivering)
			}
			if err == nil {
				err = a.call(ctx, "queue."+q, "getMessagesAdded", &added)
			}
			if err != nil {
				if isNotExist(err) {
					gone = true
					continue // a temporary queue whose subscriber just left
				}
				return h, err
			}
			h.Backlog += count
			h.Delivering += delivering
			routed += added
		}
	}
	if !gone {
		h.Routed = &routed
	}
	return h, nil
}

// call invokes op on resource and decodes the result into out.
func (a *stompAdmin) call(ctx context.Context, resource, op string, out any) error {
	raw, err := a.invokeOn(ctx, resource, op)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("artemis management %s on %s: %v", op, resource, err)
	}
	return nil
}
