package venuekit

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/contract"
)

// writeTimeout bounds one websocket write: a socket that cannot take a
// small frame in that time is dead, and the runtime redials.
const writeTimeout = 5 * time.Second

// readLimit bounds one frame (a full book of a busy market fits).
const readLimit = 4 << 20

// Socket is the connector side of one venue websocket: the venue's
// stream type wraps it and adds its subscriptions and frame decoding.
type Socket struct {
	conn *websocket.Conn
	done chan struct{}
	once sync.Once
	ids  atomic.Int64
}

// Dial opens url; a failure is UPSTREAM_UNAVAILABLE naming venue.
func Dial(ctx context.Context, venue, url string) (*Socket, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "%s stream: %v", venue, err)
	}
	c.SetReadLimit(readLimit)
	return &Socket{conn: c, done: make(chan struct{})}, nil
}

// Keepalive sends ping every interval until Close: venues drop a socket
// that stayed quiet.
func (s *Socket) Keepalive(every time.Duration, ping func(ctx context.Context) error) {
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				_ = ping(context.Background())
			}
		}
	}()
}

// WriteText writes one text frame.
func (s *Socket) WriteText(ctx context.Context, b []byte) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return s.conn.Write(ctx, websocket.MessageText, b)
}

// WriteJSON writes v as one text frame.
func (s *Socket) WriteJSON(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.WriteText(ctx, b)
}

// Read is the next frame.
func (s *Socket) Read(ctx context.Context) (websocket.MessageType, []byte, error) {
	return s.conn.Read(ctx)
}

// NextID numbers requests on this socket: 1, 2, …
func (s *Socket) NextID() int64 { return s.ids.Add(1) }

// Done is closed by Close.
func (s *Socket) Done() <-chan struct{} { return s.done }

// Close ends the socket; later calls do nothing.
func (s *Socket) Close() error {
	s.once.Do(func() {
		close(s.done)
		s.conn.CloseNow()
	})
	return nil
}

// Subscriber is a stream's Subscribe and Unsubscribe made from one
// function that writes the venue's message; op is "subscribe" or
// "unsubscribe". A venue's stream embeds it.
type Subscriber func(ctx context.Context, op string, markets []string) error

// Subscribe adds markets to the stream.
func (f Subscriber) Subscribe(ctx context.Context, markets []string) error {
	return f(ctx, "subscribe", markets)
}

// Unsubscribe removes markets from the stream.
func (f Subscriber) Unsubscribe(ctx context.Context, markets []string) error {
	return f(ctx, "unsubscribe", markets)
}

// Ping sends a websocket ping and waits for its pong.
func (s *Socket) Ping(ctx context.Context) error { return s.conn.Ping(ctx) }
