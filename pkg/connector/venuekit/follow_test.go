package venuekit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
)

// TestPrivateStream: the opening frames go out in order, pings follow,
// frames reach Frame, and a venue gone silent for three pings ends the
// stream with an error named after it.
func TestPrivateStream(t *testing.T) {
	got := make(chan string, 16)
	var silent atomic.Bool
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
			if !silent.Load() && string(b) == "ping" {
				_ = c.Write(r.Context(), websocket.MessageText, []byte("frame"))
			}
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stop := errors.New("stop")
	p := venuekit.PrivateStream{Venue: "X private", Name: "x private stream", URL: venuekit.WSURL(srv.URL),
		Open: []any{map[string]string{"op": "login"}, map[string]string{"op": "subscribe"}},
		Ping: []byte("ping"), Every: 20 * time.Millisecond,
		Frame: func(_ context.Context, _ *venuekit.Socket, data []byte) error {
			if string(data) != "frame" {
				t.Errorf("frame %q", data)
			}
			return stop
		}}
	if err := p.Run(ctx); !errors.Is(err, stop) {
		t.Fatalf("run: %v, want the frame's error", err)
	}
	for i, want := range []string{`{"op":"login"}`, `{"op":"subscribe"}`, "ping"} {
		if m := <-got; m != want {
			t.Fatalf("frame %d sent %q, want %q", i, m, want)
		}
	}
	silent.Store(true)
	for len(got) > 0 {
		<-got
	}
	if err := p.Run(ctx); err == nil || !strings.HasPrefix(err.Error(), "x private stream: nothing received") {
		t.Fatalf("silent venue: %v", err)
	}
}
