package connectortest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Feed is an adapter's private stream for one credential, run as the
// runtime runs it, with the events it emitted so far.
type Feed struct {
	events chan connector.AccountEvent
	done   chan error
	cancel context.CancelFunc
}

// Follow starts f.FollowAccount for c and waits until it called ready;
// the test fails if it returned first. The feed stops at cleanup.
func Follow(t *testing.T, f connector.AccountFeeder, c connector.Credential) *Feed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fd := &Feed{events: make(chan connector.AccountEvent, 4096), done: make(chan error, 1), cancel: cancel}
	ready := make(chan struct{})
	go func() {
		fd.done <- f.FollowAccount(ctx, c, func() { close(ready) }, func(e connector.AccountEvent) { fd.events <- e })
	}()
	t.Cleanup(cancel)
	select {
	case <-ready:
		return fd
	case err := <-fd.done:
		t.Fatalf("FollowAccount returned before ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("FollowAccount was not ready within 10 s")
	}
	return nil
}

// FollowRefused runs f.FollowAccount for c and returns the error it ended
// with, failing the test if it called ready or ran for 10 s.
func FollowRefused(t *testing.T, f connector.AccountFeeder, c connector.Credential) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	readied := false
	err := f.FollowAccount(ctx, c, func() { readied = true }, func(connector.AccountEvent) {})
	if readied {
		t.Fatalf("FollowAccount called ready for a refused login, then returned %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("FollowAccount did not return within 10 s for a refused login")
	}
	return err
}

// AuthRefused checks err is AUTHENTICATION_FAILED and mentions each of
// the venue's words.
func AuthRefused(t *testing.T, err error, venueWords ...string) {
	t.Helper()
	var ce *contract.Error
	if !errors.As(err, &ce) || ce.Reason != contract.ReasonAuthenticationFailed {
		t.Fatalf("refused login gave %v, want AUTHENTICATION_FAILED", err)
	}
	for _, w := range venueWords {
		if !containsFold(ce.Message, w) && !containsFold(ce.ExchangeMessage, w) && ce.ExchangeCode != w {
			t.Fatalf("refusal %q (venue %s %q) does not carry the venue's %q", ce.Message, ce.ExchangeCode, ce.ExchangeMessage, w)
		}
	}
}

// Until reads events until match accepts one's data and returns it; the
// events passed over are returned too, in order.
func (fd *Feed) Until(t *testing.T, what string, match func(any) bool) (any, []any) {
	t.Helper()
	var seen []any
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-fd.events:
			if e.Time.IsZero() {
				t.Fatalf("event %#v has no venue time", e.Data)
			}
			seen = append(seen, e.Data)
			if match(e.Data) {
				return e.Data, seen
			}
		case err := <-fd.done:
			t.Fatalf("feed ended (%v) before %s; saw %s", err, what, describe(seen))
		case <-deadline:
			t.Fatalf("no %s within 10 s; saw %s", what, describe(seen))
		}
	}
}

// Ended waits for FollowAccount to return and gives its error.
func (fd *Feed) Ended(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-fd.done:
		return err
	case <-time.After(within):
		t.Fatalf("FollowAccount still runs after %v", within)
	}
	return nil
}

// Stop ends the feed and waits for FollowAccount to return.
func (fd *Feed) Stop(t *testing.T) {
	t.Helper()
	fd.cancel()
	fd.Ended(t, 5*time.Second)
}

// OrderIs matches the order event of id with status (and filled size,
// when filled is not empty).
func OrderIs(id, status, filled string) func(any) bool {
	return func(d any) bool {
		o, ok := d.(contract.OrderEvent)
		return ok && o.OrderID == id && o.Status == status && (filled == "" || o.FilledSize.String() == filled)
	}
}

// FillOf matches a fill of order id.
func FillOf(id string) func(any) bool {
	return func(d any) bool {
		f, ok := d.(contract.FillEvent)
		return ok && f.OrderID == id
	}
}

// PositionIs matches a position event of market with side and size.
func PositionIs(market string, side contract.PositionSide, size string) func(any) bool {
	return func(d any) bool {
		p, ok := d.(contract.PositionEvent)
		return ok && p.Market == market && p.Side == side && (size == "" || p.Size.String() == size)
	}
}

func describe(seen []any) string {
	s := ""
	for _, d := range seen {
		s += fmt.Sprintf("\n  %T %+v", d, d)
	}
	if s == "" {
		return "nothing"
	}
	return s
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
