package htmlreport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// A client of the Chrome DevTools protocol over --remote-debugging-pipe:
// the browser reads commands on its fd 3 and writes answers and events on
// its fd 4, each message JSON ended by a NUL byte. No network port, no
// dependency.

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type browser struct {
	cmd     *exec.Cmd
	w       io.WriteCloser
	stderr  *lockedBuffer
	mu      sync.Mutex
	next    int
	pending map[int]chan cdpMessage
	events  []cdpMessage
	done    chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// startBrowser starts headless Chromium with the flags that work here as
// root, a fresh profile in profileDir, and the protocol on pipes.
func startBrowser(bin, profileDir string) (*browser, error) {
	toBrowser, fromTest, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	fromBrowser, toTest, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--hide-scrollbars", "--user-data-dir="+profileDir, "--remote-debugging-pipe", "about:blank")
	b := &browser{cmd: cmd, w: fromTest, stderr: &lockedBuffer{}, pending: map[int]chan cdpMessage{}, done: make(chan struct{})}
	cmd.Stderr = b.stderr
	cmd.ExtraFiles = []*os.File{toBrowser, toTest} // fd 3: commands in, fd 4: messages out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	toBrowser.Close()
	toTest.Close()
	go b.read(fromBrowser)
	return b, nil
}

func (b *browser) read(r io.ReadCloser) {
	defer close(b.done)
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				delete(b.pending, m.ID)
				ch <- m
			}
		} else {
			b.events = append(b.events, m)
		}
		b.mu.Unlock()
	}
}

// call sends a command (to a session's target when session is not empty)
// and waits for its answer.
func (b *browser) call(ctx context.Context, session, method string, params any, result any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpMessage, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	if params == nil {
		p = []byte("{}")
	}
	msg, err := json.Marshal(cdpMessage{ID: id, Method: method, Params: p, SessionID: session})
	if err != nil {
		return err
	}
	if _, err := b.w.Write(append(msg, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("%s: the browser went away (stderr: %s)", method, b.stderr.String())
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// waitEvent waits for an event of a session, after the first `after`
// events (the events seen before the action that causes it).
func (b *browser) waitEvent(ctx context.Context, session, method string, after int) error {
	for {
		b.mu.Lock()
		for _, e := range b.events[min(after, len(b.events)):] {
			if e.Method == method && e.SessionID == session {
				b.mu.Unlock()
				return nil
			}
		}
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		case <-b.done:
			return errors.New("the browser went away")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// eventCount is the number of events so far.
func (b *browser) eventCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.events)
}

// Events returns a copy of every event so far.
func (b *browser) Events() []cdpMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]cdpMessage(nil), b.events...)
}

// close asks the browser to quit, and kills it if it does not.
func (b *browser) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	b.w.Close()
	exited := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-exited
	}
}
