package driver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeLinkConn is a connection that fails when told to.
type fakeLinkConn struct {
	id      int
	done    chan struct{}
	mu      sync.Mutex
	err     error
	aborted bool
	closed  bool
}

func newFakeLinkConn(id int) *fakeLinkConn { return &fakeLinkConn{id: id, done: make(chan struct{})} }

func (c *fakeLinkConn) Done() <-chan struct{} { return c.done }

func (c *fakeLinkConn) Failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *fakeLinkConn) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}

func (c *fakeLinkConn) Abort() {
	c.mu.Lock()
	c.aborted = true
	c.mu.Unlock()
	c.end(errors.New("aborted"))
}

func (c *fakeLinkConn) CloseBy(time.Time) error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.end(errors.New("closed"))
	return nil
}

var errFakeClosed = errors.New("fake client closed")

// TestLinkRedialsAfterAFailureAndRecordsTheOutage: a failed connection is
// aborted, dialled again (the first redials failing), the new one becomes
// current, and the outage is recorded once, restored.
func TestLinkRedialsAfterAFailureAndRecordsTheOutage(t *testing.T) {
	var dials atomic.Int32
	conns := make(chan *fakeLinkConn, 10)
	dial := func(context.Context) (*fakeLinkConn, error) {
		n := int(dials.Add(1))
		if n == 2 || n == 3 {
			return nil, errors.New("refused")
		}
		c := newFakeLinkConn(n)
		conns <- c
		return c, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := NewLink(ctx, dial, time.Second, errFakeClosed)
	require.NoError(t, err)
	first := <-conns
	c, err := l.Conn(ctx)
	require.NoError(t, err)
	assert.Same(t, first, c)

	first.end(errors.New("connection reset"))
	second := <-conns
	c, err = l.Conn(ctx)
	require.NoError(t, err)
	assert.Same(t, second, c)
	assert.Equal(t, int32(4), dials.Load(), "two refused redials, then the fourth dial")
	first.mu.Lock()
	assert.True(t, first.aborted, "the failed connection is aborted")
	first.mu.Unlock()
	st := l.Log.Stats()
	require.Len(t, st.Outages, 1)
	assert.False(t, st.Outages[0].Restored.IsZero(), "the outage is restored")

	require.NoError(t, l.Close(time.Second, nil))
	second.mu.Lock()
	assert.True(t, second.closed, "Close closes the current connection gracefully")
	second.mu.Unlock()
	_, err = l.Conn(ctx)
	assert.ErrorIs(t, err, errFakeClosed)
	assert.NoError(t, l.Close(time.Second, nil), "a second Close does nothing")
}

// TestLinkFirstDialErrorIsReturned: the first connection is not retried.
func TestLinkFirstDialErrorIsReturned(t *testing.T) {
	refused := errors.New("refused")
	_, err := NewLink(context.Background(), func(context.Context) (*fakeLinkConn, error) { return nil, refused },
		time.Second, errFakeClosed)
	assert.ErrorIs(t, err, refused)
}

// TestLinkFarewellFailureAbortsAndAbortStopsRedialling: a failed farewell
// drops the connection instead of closing it; Abort drops the current
// connection and no redial follows.
func TestLinkFarewellFailureAbortsAndAbortStopsRedialling(t *testing.T) {
	var dials atomic.Int32
	dial := func(context.Context) (*fakeLinkConn, error) {
		return newFakeLinkConn(int(dials.Add(1))), nil
	}
	l, err := NewLink(context.Background(), dial, time.Second, errFakeClosed)
	require.NoError(t, err)
	c := l.Current()
	bye := errors.New("unsubscribe refused")
	assert.ErrorIs(t, l.Close(time.Second, func(context.Context, *fakeLinkConn) error { return bye }), bye)
	assert.True(t, c.aborted)
	assert.False(t, c.closed)

	l2, err := NewLink(context.Background(), dial, time.Second, errFakeClosed)
	require.NoError(t, err)
	c2 := l2.Current()
	l2.Abort()
	assert.True(t, c2.aborted)
	time.Sleep(3 * ReconnectMin) // a redial would have happened by now
	assert.Equal(t, int32(2), dials.Load(), "no redial after Abort")
	_, err = l2.Conn(context.Background())
	assert.ErrorIs(t, err, errFakeClosed)
}
