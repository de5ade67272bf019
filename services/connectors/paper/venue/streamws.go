package venue

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/perpgate/perpgate/pkg/paper"
)

// serveStream is GET /v1/stream: a websocket carrying one Session.
// Subscriptions arrive as StreamRequests; frames leave as StreamFrames.
// Pings from the client are answered by the websocket library while the
// reader runs.
func serveStream(e *paper.Engine, w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	s := NewSession(e, 0)
	defer s.Close()
	go func() {
		defer cancel()
		for {
			var req StreamRequest
			if err := wsjson.Read(ctx, c, &req); err != nil {
				return
			}
			switch req.Op {
			case "subscribe":
				_ = s.Subscribe(ctx, req.Markets)
			case "unsubscribe":
				_ = s.Unsubscribe(ctx, req.Markets)
			}
		}
	}()
	for {
		f, err := s.Next(ctx)
		if err != nil {
			return
		}
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		err = wsjson.Write(wctx, c, f)
		wcancel()
		if err != nil {
			return
		}
	}
}

// StreamConn is a client's socket on GET /v1/stream.
type StreamConn struct {
	c *websocket.Conn
}

// DialStream opens the venue's stream.
func (c *Client) DialStream(ctx context.Context) (*StreamConn, error) {
	u := "ws" + strings.TrimPrefix(c.base, "http") + "/v1/stream"
	ws, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		return nil, &Error{Kind: KindInternal, Message: "dial paper stream: " + err.Error()}
	}
	ws.SetReadLimit(1 << 20)
	return &StreamConn{c: ws}, nil
}

// Subscribe asks for ticks of markets.
func (s *StreamConn) Subscribe(ctx context.Context, markets []string) error {
	return wsjson.Write(ctx, s.c, StreamRequest{Op: "subscribe", Markets: markets})
}

// Unsubscribe stops ticks of markets.
func (s *StreamConn) Unsubscribe(ctx context.Context, markets []string) error {
	return wsjson.Write(ctx, s.c, StreamRequest{Op: "unsubscribe", Markets: markets})
}

// Next reads the next frame.
func (s *StreamConn) Next(ctx context.Context) (StreamFrame, error) {
	var f StreamFrame
	err := wsjson.Read(ctx, s.c, &f)
	return f, err
}

// Close closes the socket.
func (s *StreamConn) Close() error {
	err := s.c.Close(websocket.StatusNormalClosure, "")
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
