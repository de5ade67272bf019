package simkit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestSockets: dials are counted, one pump runs while any socket is open
// and ends (idle called) when the last closes, Drop closes every socket,
// and an outbox delivers in order.
func TestSockets(t *testing.T) {
	var s Sockets[*Outbox]
	var pumps, idles atomic.Int32
	pumpDone := make(chan struct{}, 4)
	pump := func() {
		pumps.Add(1)
		for {
			if _, ok := s.Live(func() { idles.Add(1) }); !ok {
				pumpDone <- struct{}{}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, release, err := s.Accept(w, r, NewOutbox, pump)
		if err != nil {
			return
		}
		defer release()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go o.Run(ctx, cancel)
		o.Send([]byte("one"))
		o.SendJSON(map[string]int{"two": 2})
		_, _, _ = o.Conn().Read(ctx) // until the client goes
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dial := func() *websocket.Conn {
		c, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := dial(), dial()
	// A dial returns at the handshake, before Accept registers the socket:
	// a frame from the server on each is what says both are registered.
	for _, want := range []string{"one", `{"two":2}`} {
		if _, got, err := a.Read(ctx); err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	if _, got, err := b.Read(ctx); err != nil || string(got) != "one" {
		t.Fatalf("second socket read %q, %v; want \"one\"", got, err)
	}
	if s.Dials() != 2 || len(s.Open()) != 2 || pumps.Load() != 1 {
		t.Fatalf("dials %d, open %d, pumps %d; want 2, 2, 1", s.Dials(), len(s.Open()), pumps.Load())
	}
	s.Drop()
	for _, c := range []*websocket.Conn{a, b} {
		for {
			if _, _, err := c.Read(ctx); err != nil {
				break // closed by Drop (after any frames still queued)
			}
		}
	}
	select {
	case <-pumpDone:
	case <-ctx.Done():
		t.Fatal("the pump did not end with the last socket")
	}
	if idles.Load() != 1 {
		t.Fatalf("idle ran %d times, want 1", idles.Load())
	}
	c := dial() // a new socket starts a new pump
	defer c.CloseNow()
	for pumps.Load() != 2 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if s.Dials() != 3 || pumps.Load() != 2 {
		t.Fatalf("dials %d, pumps %d; want 3, 2", s.Dials(), pumps.Load())
	}
}

// TestOutboxCutsOffSlowClient: a socket whose queue fills is closed.
func TestOutboxCutsOffSlowClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		o := NewOutbox(ws) // never Run: nothing drains the queue
		for range 300 {
			o.Send([]byte("x"))
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err == nil || ctx.Err() != nil {
		t.Fatalf("read on a cut-off socket: %v (context %v)", err, ctx.Err())
	}
}
