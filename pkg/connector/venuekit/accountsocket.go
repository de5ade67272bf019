package venuekit

import (
	"context"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/contract"
)

// accountReadLimit bounds one frame of an account feed: a snapshot of a
// busy account's fills or positions can be large.
const accountReadLimit = 16 << 20

// AccountSocket is the private websocket of one credential's account
// feed: the venue logs in on it if it must, then Follow subscribes and
// hands every frame to the venue's decoder.
type AccountSocket struct {
	*Socket
	venue string
}

// DialAccount opens url for an account feed; a failure is
// UPSTREAM_UNAVAILABLE naming venue.
func DialAccount(ctx context.Context, venue, url string) (*AccountSocket, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "%s account stream: %v", venue, err)
	}
	c.SetReadLimit(accountReadLimit)
	return &AccountSocket{Socket: &Socket{conn: c, done: make(chan struct{})}, venue: venue}, nil
}

// Lost is the feed's end for a failed read or write: a contract error as
// it is, the end of ctx as itself, anything else UPSTREAM_UNAVAILABLE.
func (s *AccountSocket) Lost(ctx context.Context, err error) error {
	if ce, ok := contract.AsError(err); ok {
		return ce
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "%s account stream closed: %v", s.venue, err)
}

// Follow writes the subscriptions subs, then reads until the socket
// fails or frame returns an error. frame decodes one frame (emitting its
// events) and says whether it acknowledged a subscription; ready is
// called once every subscription is acknowledged.
func (s *AccountSocket) Follow(ctx context.Context, subs []any, ready func(), frame func(data []byte) (ack bool, err error)) error {
	for _, sub := range subs {
		if err := s.WriteJSON(ctx, sub); err != nil {
			return s.Lost(ctx, err)
		}
	}
	acked := 0
	for {
		_, data, err := s.Read(ctx)
		if err != nil {
			return s.Lost(ctx, err)
		}
		ack, err := frame(data)
		if err != nil {
			return err
		}
		if acked += btoi(ack); ack && acked == len(subs) {
			ready()
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
