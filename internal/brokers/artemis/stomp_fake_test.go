package artemis

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3/frame"

	"pslab/internal/driver"
)

// fakeSTOMP is a minimal STOMP 1.2 server on loopback for unit tests of
// the client logic: it records every frame after CONNECT and answers
// receipts only when the test releases them (hold) or at once.
type fakeSTOMP struct {
	t    *testing.T
	ln   net.Listener
	hold bool
	// keepOpen: after DISCONNECT the server does not close the connection
	// (a broker that never answers it).
	keepOpen bool
	frames   chan *frame.Frame // every frame the client sent after CONNECT

	mu        sync.Mutex
	conn      net.Conn
	w         *frame.Writer
	pending   []string // receipt ids held back
	clientIDs []string // of every CONNECT
}

func newFakeSTOMP(t *testing.T, hold bool) *fakeSTOMP {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeSTOMP{t: t, ln: ln, hold: hold, frames: make(chan *frame.Frame, 10000)}
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		if s.conn != nil {
			s.conn.Close()
		}
		s.mu.Unlock()
	})
	go s.serve()
	return s
}

func (s *fakeSTOMP) endpoint() driver.Endpoint {
	return driver.Endpoint{URL: "stomp://" + s.ln.Addr().String(), User: "u", Password: "p"}
}

// serve handles one connection at a time, accepting the next when the
// client reconnects.
func (s *fakeSTOMP) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.handle(c)
	}
}

func (s *fakeSTOMP) handle(c net.Conn) {
	r := frame.NewReader(c)
	s.mu.Lock()
	s.conn = c
	s.w = frame.NewWriter(c)
	s.mu.Unlock()
	defer c.Close()
	for {
		f, err := r.Read()
		if err != nil {
			return
		}
		if f == nil {
			continue
		}
		switch f.Command {
		case frame.CONNECT:
			if f.Header.Get(frame.Passcode) != "p" {
				s.write(frame.New(frame.ERROR, frame.Message, "Security Error occurred: User name [u] or password is invalid"))
				return
			}
			s.mu.Lock()
			s.clientIDs = append(s.clientIDs, f.Header.Get("client-id"))
			s.mu.Unlock()
			s.write(frame.New(frame.CONNECTED, frame.Version, "1.2", frame.Server, "Fake/1.0"))
			continue
		}
		s.frames <- f
		if f.Command == frame.DISCONNECT {
			// As Artemis: a receipt if asked for, then the broker closes.
			if id, ok := f.Header.Contains(frame.Receipt); ok {
				s.write(frame.New(frame.RECEIPT, frame.ReceiptId, id))
			}
			if !s.keepOpen {
				return
			}
		}
		if id, ok := f.Header.Contains(frame.Receipt); ok {
			s.mu.Lock()
			if s.hold && f.Command == frame.SEND {
				s.pending = append(s.pending, id)
				s.mu.Unlock()
			} else {
				s.mu.Unlock()
				s.write(frame.New(frame.RECEIPT, frame.ReceiptId, id))
			}
		}
	}
}

// drop closes the client's connection as a crashed broker would; held
// receipts are forgotten.
func (s *fakeSTOMP) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn.Close()
	s.pending = nil
}

func (s *fakeSTOMP) write(f *frame.Frame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.Write(f)
}

// release answers the n oldest held receipts.
func (s *fakeSTOMP) release(n int) {
	s.mu.Lock()
	ids := s.pending[:n]
	s.pending = s.pending[n:]
	s.mu.Unlock()
	for _, id := range ids {
		s.write(frame.New(frame.RECEIPT, frame.ReceiptId, id))
	}
}

// next returns the next frame the client sent.
func (s *fakeSTOMP) next() *frame.Frame {
	s.t.Helper()
	select {
	case f := <-s.frames:
		return f
	case <-time.After(10 * time.Second):
		s.t.Fatal("fake STOMP server: no frame from the client within 10 s")
		return nil
	}
}

// nextOf skips frames until one with command cmd.
func (s *fakeSTOMP) nextOf(cmd string) *frame.Frame {
	for {
		if f := s.next(); f.Command == cmd {
			return f
		}
	}
}
