package nats

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"pslab/internal/driver"
)

// natsWatch records the outages of one nats.go connection: lost when the
// library reports the disconnect, restored when it reports the reconnect
// (nats.go has then re-sent the core subscriptions), or, when onReconnect
// is set, when its owner says it is subscribed again.
type natsWatch struct {
	log     driver.ConnTracker
	closing atomic.Bool              // set before Close: its disconnect is no outage
	sock    atomic.Pointer[net.Conn] // the socket nats.go dialed last
	dials   atomic.Uint64            // sockets dialed so far (see conns)
	// inBase is the client's count of messages parsed (nats.go InMsgs,
	// over all its connections) when the current connection began, as
	// the reconnect callback saw it: parsedHere is the rest.
	inBase      atomic.Uint64
	onReconnect func() // runs on nats.go's callback goroutine; must not block
	// tls, for a client of a case with tls: on, times its handshakes
	// (nats.go makes them with its Config over sockets of its Dialer).
	tls *driver.TLSClient
}

// conns identifies the connection in use: it changes with every socket
// nats.go dials, and nats.go dials only to replace a lost connection,
// before anything is sent on the new one. An atomic load per send where
// nc.Stats() (a lock and a copy) cost 2 % of the client's CPU; the count
// moves at the dial, earlier than nats.go's reconnect counter, so a PONG
// of the new connection never confirms sends of the old one.
func (w *natsWatch) conns() uint64 { return w.dials.Load() }

func (w *natsWatch) options() []nats.Option {
	return []nats.Option{
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if !w.closing.Load() {
				w.log.Lost(time.Now(), err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			w.inBase.Store(nc.Stats().InMsgs)
			switch {
			case w.closing.Load():
			case w.onReconnect != nil:
				w.onReconnect()
			default:
				w.log.Restored(time.Now())
			}
		}),
	}
}

// parsedHere is how many messages the client parsed on its current
// connection: nats.go's count since the last reconnect. It may miss a few
// parsed before the reconnect callback ran (never counts too many).
func (w *natsWatch) parsedHere(nc *nats.Conn) uint64 {
	return nc.Stats().InMsgs - min(w.inBase.Load(), nc.Stats().InMsgs)
}

// resubscribeLoop checks the JetStream consumer after each reconnect until
// the subscriber is closed.
func (s *natsSubscriber) resubscribeLoop() {
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-s.stop; cancel() }()
	for {
		select {
		case <-s.stop:
			return
		case <-s.resub:
		}
		for n := 0; ; n++ {
			err := s.ensureConsumer(ctx)
			if err == nil {
				s.watch.log.Restored(time.Now())
				break
			}
			if !driver.Backoff(ctx, s.stop, n) {
				return
			}
		}
	}
}

// ensureConsumer makes sure the subscriber's consumer exists after a
// reconnect. Consume resumes by itself on a consumer the broker kept; one
// the broker lost is created again (and its stream, with the case's
// configuration, if that is gone too): the durable under its name, an
// ephemeral one as a new subscription that delivers only new messages.
func (s *natsSubscriber) ensureConsumer(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s.mu.Lock()
	name := s.consName
	s.mu.Unlock()
	_, err := s.js.Consumer(ctx, s.stream, name)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return err
	}
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err := s.js.CreateStream(ctx, streamConfig(s.spec.Case))
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return err
		}
	}
	cfg := s.cfg
	if cfg.Durable == "" {
		cfg.DeliverPolicy = jetstream.DeliverNewPolicy
	}
	return s.startConsumer(ctx, cfg)
}
