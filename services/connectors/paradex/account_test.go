package paradex

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/shopspring/decimal"
)

// accountFeed runs FollowAccount in the background and keeps what it
// emits.
type accountFeed struct {
	mu       sync.Mutex
	events   []connector.AccountEvent
	ready    chan struct{}
	done     chan error
	finished chan struct{}
}

func followFeed(t *testing.T, a connector.AccountFeeder, c connector.Credential) *accountFeed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &accountFeed{ready: make(chan struct{}), done: make(chan error, 1), finished: make(chan struct{})}
	var once sync.Once
	go func() {
		defer close(f.finished)
		f.done <- a.FollowAccount(ctx, c, func() { once.Do(func() { close(f.ready) }) }, func(ev connector.AccountEvent) {
			if ev.Time.IsZero() {
				t.Errorf("event %+v without the venue's time", ev.Data)
			}
			f.mu.Lock()
			f.events = append(f.events, ev)
			f.mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-f.finished:
		case <-time.After(5 * time.Second):
			t.Error("FollowAccount did not return after its context ended")
		}
	})
	select {
	case <-f.ready:
	case err := <-f.done:
		t.Fatalf("FollowAccount returned before ready: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no ready within 5 s")
	}
	return f
}

// until waits for an event after index from that want accepts.
func (f *accountFeed) until(t *testing.T, from int, what string, want func(any) bool) (int, any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		for i := from; i < len(f.events); i++ {
			if want(f.events[i].Data) {
				d := f.events[i].Data
				f.mu.Unlock()
				return i, d
			}
		}
		f.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	f.mu.Lock()
	var b strings.Builder
	for _, ev := range f.events {
		fmt.Fprintf(&b, "  %T %+v\n", ev.Data, ev.Data)
	}
	f.mu.Unlock()
	t.Fatalf("no %s within 5 s; events:\n%s", what, b.String())
	return 0, nil
}

func (f *accountFeed) all() []connector.AccountEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]connector.AccountEvent(nil), f.events...)
}

func anOrder(id, status string, filled func(decimal.Decimal) bool) func(any) bool {
	return func(d any) bool {
		o, ok := d.(contract.OrderEvent)
		return ok && o.OrderID == id && o.Status == status && filled(o.FilledSize)
	}
}

func richFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, sim.Config{})
	if _, err := f.sim.Engine().EnsureAccount(testAddress, decimal.NewFromInt(100_000_000)); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFollowAccountLimitFillPositionCancel: NEW, a limit order that takes
// part of the book and rests, its taker then maker fills when the mark
// falls through it, the position and balance it moves, then a cancelled
// order, normalized from orders.ALL, fills.ALL, positions and account.
func TestFollowAccountLimitFillPositionCancel(t *testing.T) {
	f := richFixture(t)
	// The order's price is one above the best ask: a walk step between
	// reading the book and placing (signing is slow under load) could
	// leave it uncrossed, as a cold CI run saw.
	f.clock.freeze()
	ctx := context.Background()
	feed := followFeed(t, f.a, f.cred)
	m := f.market(t, "BTC-USD-PERP")
	book, err := f.sim.Engine().Orderbook("BTC-USD-PERP", 1)
	if err != nil {
		t.Fatal(err)
	}
	price := book.Asks[0].Price.Add(d("1"))
	size := d("100") // more than the book holds up to price
	lo, err := f.a.PlaceLimitOrder(ctx, f.cred, limit(m, contract.Buy, size.String(), price.String(), "feed-1"))
	if err != nil {
		t.Fatal(err)
	}
	id := lo.OrderID
	i, got := feed.until(t, 0, "a partly filled OPEN order", anOrder(id, contract.StatusOpen, decimal.Decimal.IsPositive))
	o := got.(contract.OrderEvent)
	if o.Type != "LIMIT" || o.ClientOrderID != "feed-1" || !o.Size.Equal(size) || o.Price == nil || !o.Price.Equal(price) || o.AvgPrice == nil {
		t.Errorf("order event %+v: want LIMIT feed-1 %s at %s with avgPrice", o, size, price)
	}
	feed.until(t, 0, "a taker fill", func(d any) bool {
		fl, ok := d.(contract.FillEvent)
		return ok && fl.OrderID == id && fl.Liquidity == "TAKER" && fl.Fee.IsPositive() && fl.FeeAsset == "USDC" && fl.ClientOrderID == "feed-1"
	})
	feed.until(t, 0, "a LONG position", func(d any) bool {
		p, ok := d.(contract.PositionEvent)
		return ok && p.Market == "BTC-USD-PERP" && p.Side == contract.Long && p.Size.IsPositive() && p.Leverage != nil
	})
	feed.until(t, 0, "a balance", func(d any) bool {
		b, ok := d.(contract.BalanceEvent)
		return ok && b.Asset == "USDC" && b.Equity != nil && b.FreeCollateral != nil
	})

	if _, err := f.sim.Engine().SetMarkPrice("BTC-USD-PERP", price.Sub(d("500"))); err != nil {
		t.Fatal(err)
	}
	feed.until(t, i+1, "the FILLED order", anOrder(id, contract.StatusFilled, size.Equal))
	feed.until(t, 0, "a maker fill", func(d any) bool {
		fl, ok := d.(contract.FillEvent)
		return ok && fl.OrderID == id && fl.Liquidity == "MAKER"
	})
	feed.until(t, i+1, "the whole position", func(d any) bool {
		p, ok := d.(contract.PositionEvent)
		return ok && p.Side == contract.Long && p.Size.Equal(size)
	})
	filled, ids := decimal.Zero, map[string]bool{}
	for _, ev := range feed.all() {
		if fl, ok := ev.Data.(contract.FillEvent); ok && fl.OrderID == id {
			if ids[fl.FillID] {
				t.Errorf("fill %s emitted twice", fl.FillID)
			}
			ids[fl.FillID] = true
			filled = filled.Add(fl.Size)
		}
	}
	if !filled.Equal(size) {
		t.Errorf("fills add up to %s, want %s", filled, size)
	}

	far, err := f.a.PlaceLimitOrder(ctx, f.cred, limit(m, contract.Sell, "0.01", price.Mul(d("2")).String(), "feed-far"))
	if err != nil {
		t.Fatal(err)
	}
	k, _ := feed.until(t, 0, "the far order OPEN", anOrder(far.OrderID, contract.StatusOpen, decimal.Decimal.IsZero))
	if err := f.a.CancelOrder(ctx, f.cred, far.OrderID, &m); err != nil {
		t.Fatal(err)
	}
	_, got = feed.until(t, k, "the far order CANCELLED", anOrder(far.OrderID, contract.StatusCancelled, decimal.Decimal.IsZero))
	if r := got.(contract.OrderEvent).Reason; r != "" {
		t.Errorf("the owner's cancel has reason %q, want none", r)
	}
}

// TestFollowAccountRejectedAtIntake: an order Paradex refuses after its
// 201 (post-only that would cross) arrives NEW, then REJECTED with the
// reason every venue's post-only refusal has.
func TestFollowAccountRejectedAtIntake(t *testing.T) {
	f := richFixture(t)
	feed := followFeed(t, f.a, f.cred)
	m := f.market(t, "BTC-USD-PERP")
	book, _ := f.sim.Engine().Orderbook("BTC-USD-PERP", 1)
	req := limit(m, contract.Buy, "0.01", book.Asks[0].Price.Add(d("100")).String(), "feed-po")
	req.PostOnly = true
	lo, err := f.a.PlaceLimitOrder(context.Background(), f.cred, req)
	if err == nil && lo.OrderID == "" {
		t.Fatalf("placement %+v", lo)
	}
	_, got := feed.until(t, 0, "a REJECTED order", func(d any) bool {
		o, ok := d.(contract.OrderEvent)
		return ok && o.Status == contract.StatusRejected
	})
	if r := got.(contract.OrderEvent).Reason; r != "post_only_would_take" {
		t.Errorf("rejected order's reason %q, want post_only_would_take (Paradex's POST_ONLY_WOULD_CROSS)", r)
	}
}

// TestFollowAccountFunding: a funding settlement of the engine arrives as
// a funding event without the rate and size Paradex does not give.
func TestFollowAccountFunding(t *testing.T) {
	f := richFixture(t)
	m := f.market(t, "BTC-USD-PERP")
	if _, err := f.a.PlaceMarketOrder(context.Background(), f.cred, connector.OrderRequest{Market: m, Type: connector.MarketType,
		Side: contract.Buy, Size: d("0.1"), ClientOrderID: "feed-mkt"}); err != nil {
		t.Fatal(err)
	}
	feed := followFeed(t, f.a, f.cred)
	f.clock.advance(8 * time.Hour)
	f.sim.Engine().Tick()
	_, got := feed.until(t, 0, "a funding event", func(d any) bool {
		_, ok := d.(contract.FundingEvent)
		return ok
	})
	ev := got.(contract.FundingEvent)
	if ev.Market != "BTC-USD-PERP" || ev.Amount.IsZero() || ev.Rate != nil || ev.PositionSize != nil {
		t.Errorf("funding event %+v: want BTC-USD-PERP, an amount, no rate or size", ev)
	}
}

// TestFollowAccountLogin: a key Paradex refuses at POST /auth, and a
// socket whose auth is refused even with a fresh token, end with
// AUTHENTICATION_FAILED naming Paradex's reason; a token refused once is
// replaced and the feed opens.
func TestFollowAccountLogin(t *testing.T) {
	f := richFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	follow := func(c connector.Credential) (bool, error) {
		readied := false
		err := f.a.FollowAccount(ctx, c, func() { readied = true }, func(connector.AccountEvent) {})
		return readied, err
	}
	readied, err := follow(credential("wrong-key", testAddress, otherKey))
	ce := wantReason(t, err, contract.ReasonAuthenticationFailed)
	if readied || ce.ExchangeCode != "INVALID_SUBKEY" || strings.Contains(ce.Error(), strings.TrimPrefix(otherKey, "0x")) {
		t.Errorf("wrong key: ready %v, %v", readied, ce)
	}

	f.sim.RefuseStreamAuth("Invalid Bearer Token")
	before := f.sim.TokensIssued()
	readied, err = follow(f.cred)
	ce = wantReason(t, err, contract.ReasonAuthenticationFailed)
	if readied || !strings.Contains(ce.Message, "Invalid Bearer Token (40111)") || !strings.Contains(ce.Message, f.cred.ID) {
		t.Errorf("refused socket auth: ready %v, %v", readied, ce)
	}
	if n := f.sim.TokensIssued() - before; n != 2 {
		t.Errorf("%d tokens for a refused socket auth, want the cached one replaced once (2 in all)", n)
	}

	f.sim.RefuseStreamAuth("")
	f.sim.RevokeTokens() // the shared token is refused once, then replaced
	feed := followFeed(t, f.a, f.cred)
	_ = feed
}

// TestFollowAccountDropped: a dropped socket ends FollowAccount with an
// error that is not an authentication failure, so the runtime reconnects.
func TestFollowAccountDropped(t *testing.T) {
	f := richFixture(t)
	feed := followFeed(t, f.a, f.cred)
	f.sim.DropStreams()
	select {
	case err := <-feed.done:
		if ce, ok := contract.AsError(err); err == nil || (ok && ce.Reason == contract.ReasonAuthenticationFailed) {
			t.Fatalf("FollowAccount after a drop = %v, want a connection error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("FollowAccount still running 5 s after its socket was dropped")
	}
}

// TestFollowAccountAgainAfterDrop: after a drop a new FollowAccount opens
// and events flow on it.
func TestFollowAccountAgainAfterDrop(t *testing.T) {
	f := richFixture(t)
	first := followFeed(t, f.a, f.cred)
	f.sim.DropStreams()
	select {
	case <-first.done:
	case <-time.After(5 * time.Second):
		t.Fatal("FollowAccount still running 5 s after the drop")
	}
	again := followFeed(t, f.a, f.cred)
	m := f.market(t, "BTC-USD-PERP")
	mark, _ := f.a.GetMarkPrice(context.Background(), f.cred, m)
	lo, err := f.a.PlaceLimitOrder(context.Background(), f.cred, limit(m, contract.Buy, "0.01", mark.MarkPrice.Mul(d("0.9")).Round(1).String(), "again-1"))
	if err != nil {
		t.Fatal(err)
	}
	again.until(t, 0, "the order OPEN", anOrder(lo.OrderID, contract.StatusOpen, decimal.Decimal.IsZero))
}
