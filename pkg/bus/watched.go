package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
)

// ErrBusLost means the connection to NATS dropped while a request was in
// flight: the request may have been carried out and its reply lost.
var ErrBusLost = errors.New("the connection to nats was lost while the request was in flight")

// Watching the connection: how often it is looked at, and how long a reply
// may still come once it is back (the answering service resends a reply it
// buffered while it reconnected).
const (
	linkPoll       = 50 * time.Millisecond
	lostReplyGrace = 500 * time.Millisecond
)

// RequestConnectorWatched is RequestConnector for a call whose outcome the
// caller must hear of as soon as anything can be said: when the
// connection drops while the request is in flight, it answers ErrBusLost
// once the connection is back and no reply came within lostReplyGrace, or
// when the deadline passes, rather than waiting out the deadline for a
// reply that was lost with the connection.
func RequestConnectorWatched(ctx context.Context, nc *nats.Conn, subject string, req contract.ConnectorRequest, resp any) error {
	// The reply lands in a buffer of the request's own: after an early
	// answer nobody reads it.
	var raw json.RawMessage
	done := make(chan error, 1)
	go func() { done <- RequestConnector(ctx, nc, subject, req, &raw) }()
	tick := time.NewTicker(linkPoll)
	defer tick.Stop()
	lost := false
	var back <-chan time.Time
	for {
		select {
		case err := <-done:
			if err != nil && lost && !errors.As(err, new(*contract.Error)) {
				return fmt.Errorf("request %s: %w (%v)", subject, ErrBusLost, err)
			}
			if err != nil || resp == nil {
				return err
			}
			if out, ok := resp.(*json.RawMessage); ok {
				*out = raw
				return nil
			}
			return json.Unmarshal(raw, resp)
		case <-tick.C:
			if !nc.IsConnected() {
				lost, back = true, nil
			} else if lost && back == nil {
				back = time.After(lostReplyGrace)
			}
		case <-back:
			return fmt.Errorf("request %s: %w", subject, ErrBusLost)
		}
	}
}
