package fake

import (
	"context"
	"strings"
	"time"

	"pslab/internal/driver"
)

// inboxed is a published message waiting for the broker's service.
type inboxed struct {
	prefix string
	topic  int
	m      driver.Message
}

// enqueue puts a published message in the inbox for the service
// goroutine (started on the first message). Called with mu held.
func (srv *server) enqueue(prefix string, topic int, m driver.Message) {
	srv.inbox = append(srv.inbox, inboxed{prefix: prefix, topic: topic, m: m})
	if !srv.serving {
		srv.serving = true
		go srv.serve()
	}
	srv.cond.Broadcast()
}

// serve routes the inbox at ServiceRate messages a second: a single
// server of that capacity. While the inbox holds messages it routes as
// many as are due since it started (the first at once), so an offered
// load above the capacity builds a backlog in the inbox; once the inbox
// is empty it ends (enqueue starts it again).
func (srv *server) serve() {
	rate := srv.knobs.ServiceRate
	start := time.Now()
	n := 0
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for len(srv.inbox) > 0 {
		due := int(time.Since(start).Seconds()*rate) + 1 - n
		if due <= 0 {
			wait := time.Duration(float64(n)/rate*float64(time.Second)) - time.Since(start)
			srv.mu.Unlock()
			time.Sleep(max(wait, 50*time.Microsecond))
			srv.mu.Lock()
			continue
		}
		for ; due > 0 && len(srv.inbox) > 0; due-- {
			in := srv.inbox[0]
			srv.inbox[0] = inboxed{}
			srv.inbox = srv.inbox[1:]
			srv.route(in.prefix, in.topic, in.m)
			n++
		}
	}
	srv.serving = false
	srv.cond.Broadcast()
}

// served waits until no message of the case prefix waits in the inbox.
func (srv *server) served(ctx context.Context, prefix string) error {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for srv.waiting(prefix) {
		if err := srv.wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// waiting tells whether a message of prefix is in the inbox. Called with
// mu held.
func (srv *server) waiting(prefix string) bool {
	for _, in := range srv.inbox {
		if strings.HasPrefix(in.prefix, prefix) {
			return true
		}
	}
	return false
}
