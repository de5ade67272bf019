package fapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
)

// UserStream is a listen-key user data stream: POST creates the key
// (valid 60 minutes), PUT extends it, and the socket at URL(key) carries
// the account's events from the moment it opens (no subscription to
// confirm). A key that expired anyway ends the feed (Frame's error or a
// refused PUT); the runtime's reconnect creates a new one.
type UserStream struct {
	Venue  string
	Listen func(ctx context.Context, method string) (string, error)
	URL    func(key string) string
	Every  time.Duration // keep-alive (PUT) interval, well inside the hour
	Ping   time.Duration // websocket ping interval finding a silently dead socket; 0 for none
	Frame  func(data []byte) error
}

// Follow runs the stream until ctx ends, the socket drops, Frame fails or
// a keep-alive is refused.
func (u UserStream) Follow(ctx context.Context, ready func()) error {
	key, err := u.Listen(ctx, http.MethodPost)
	if err != nil {
		return err
	}
	ws, err := venuekit.Dial(ctx, u.Venue+" user data", u.URL(key))
	if err != nil {
		return err
	}
	defer ws.Close()
	ready()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go u.keepAlive(ctx, cancel)
	if u.Ping > 0 {
		go ping(ctx, ws, u.Ping)
	}
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				return cause
			}
			return fmt.Errorf("%s user data stream: %w", u.Venue, err)
		}
		if err := u.Frame(data); err != nil {
			return err
		}
	}
}

// keepAlive extends the listen key until ctx ends; a refused keep-alive
// ends the feed with its error.
func (u UserStream) keepAlive(ctx context.Context, stop context.CancelCauseFunc) {
	t := time.NewTicker(u.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := u.Listen(ctx, http.MethodPut); err != nil {
				stop(fmt.Errorf("%s listen key keep-alive: %w", u.Venue, err))
				return
			}
		}
	}
}

// ping closes the socket when a ping finds it dead, so Read ends.
func ping(ctx context.Context, ws *venuekit.Socket, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := ws.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				ws.Close()
				return
			}
		}
	}
}
