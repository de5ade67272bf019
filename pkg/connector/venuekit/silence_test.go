package venuekit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
)

// TestSocketReadWithin: a frame within the time is read; a venue that
// then goes quiet without closing ends the read after the time.
func TestSocketReadWithin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		_ = c.Write(r.Context(), websocket.MessageText, []byte("hello"))
		<-r.Context().Done() // then silence, the connection left open
	}))
	defer srv.Close()
	ctx := context.Background()
	s, err := venuekit.Dial(ctx, "X", venuekit.WSURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b, err := s.ReadWithin(ctx, 5*time.Second); err != nil || string(b) != "hello" {
		t.Fatalf("read %q %v", b, err)
	}
	start := time.Now()
	_, err = s.ReadWithin(ctx, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "nothing received for 100ms") || time.Since(start) > 2*time.Second {
		t.Fatalf("silent socket: %v after %v", err, time.Since(start))
	}
}
