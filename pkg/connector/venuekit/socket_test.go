package venuekit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// TestSocket: the socket keeps the venue's connection alive with the
// venue's ping, writes JSON requests numbered 1, 2, … and reads what the
// venue sends; a venue that does not answer the dial is
// UPSTREAM_UNAVAILABLE.
func TestSocket(t *testing.T) {
	got := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			got <- string(b)
			_ = c.Write(r.Context(), websocket.MessageText, []byte(`{"echo":true}`))
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := venuekit.Dial(ctx, "X", venuekit.WSURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Keepalive(10*time.Millisecond, func(ctx context.Context) error { return s.WriteText(ctx, []byte("ping")) })
	if err := s.WriteJSON(ctx, map[string]any{"id": s.NextID()}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for !seen["ping"] || !seen[`{"id":1}`] {
		select {
		case m := <-got:
			seen[m] = true
		case <-ctx.Done():
			t.Fatalf("venue saw %v, want a ping and {\"id\":1}", seen)
		}
	}
	if _, b, err := s.Read(ctx); err != nil || string(b) != `{"echo":true}` {
		t.Fatalf("read %q %v", b, err)
	}
	s.Close()
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err = venuekit.Dial(ctx, "X", "ws://127.0.0.1:1")
	if ce, ok := contract.AsError(err); !ok || ce.Reason != contract.ReasonUpstreamUnavailable {
		t.Fatalf("dial refused: %v", err)
	}
}
