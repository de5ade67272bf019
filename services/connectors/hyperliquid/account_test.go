package hyperliquid_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	"github.com/shopspring/decimal"
)

// feed runs FollowAccount in the background and keeps what it emits.
type feed struct {
	mu       sync.Mutex
	events   []connector.AccountEvent
	ready    chan struct{}
	done     chan error
	finished chan struct{}
	cancel   context.CancelFunc
}

func follow(t *testing.T, a connector.AccountFeeder, c connector.Credential) *feed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &feed{ready: make(chan struct{}), done: make(chan error, 1), finished: make(chan struct{}), cancel: cancel}
	var once sync.Once
	go func() {
		defer close(f.finished)
		f.done <- a.FollowAccount(ctx, c, func() { once.Do(func() { close(f.ready) }) }, func(ev connector.AccountEvent) {
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
	return f
}

func (f *feed) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-f.ready:
	case err := <-f.done:
		t.Fatalf("FollowAccount returned before ready: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no ready within 5 s")
	}
}

// until waits for an event matching want among those after from and
// returns its index.
func (f *feed) until(t *testing.T, from int, what string, want func(any) bool) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		for i := from; i < len(f.events); i++ {
			if want(f.events[i].Data) {
				f.mu.Unlock()
				return i
			}
		}
		f.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s within 5 s; events:\n%s", what, f.dump())
	return 0
}

func (f *feed) dump() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for _, ev := range f.events {
		fmt.Fprintf(&b, "  %T %+v\n", ev.Data, ev.Data)
	}
	return b.String()
}

func (f *feed) all() []connector.AccountEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]connector.AccountEvent(nil), f.events...)
}

func orderIs(id, status string, filled func(decimal.Decimal) bool) func(any) bool {
	return func(d any) bool {
		o, ok := d.(contract.OrderEvent)
		return ok && o.OrderID == id && o.Status == status && filled(o.FilledSize)
	}
}

func positive(d decimal.Decimal) bool { return d.IsPositive() }
func zero(d decimal.Decimal) bool     { return d.IsZero() }

// hlFeedVenue is the simulator with account A funded for big orders, on a
// clock that moves only when the test says (so the walk does not fill
// orders by itself), and an adapter on it.
func hlFeedVenue(t *testing.T) (*sim.Sim, *hyperliquid.Adapter, connector.Credential, *testenv.Clock) {
	t.Helper()
	clock := testenv.NewClock(time.Now())
	s := sim.New(sim.Config{Now: clock.Now, Seed: 7})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	for acct, key := range map[string]string{accountA: agentKeyA, accountB: agentKeyB} {
		if err := s.AddUser(acct, decimal.NewFromInt(10_000_000)); err != nil {
			t.Fatal(err)
		}
		s.ApproveAgent(acct, agentOf(t, key), false)
	}
	cfg := hyperliquid.DefaultConfig()
	cfg.URL = srv.URL
	return s, hyperliquid.NewAdapter(cfg, nil), credential("hl-feed", accountA, agentKeyA), clock
}

// TestFollowAccountLimitFillPositionCancel: a limit order that takes part
// of the book and rests, its fills (taker, then maker when the mark falls
// through it), the position it opens and the balance, then a cancelled
// order, all normalized from orderUpdates, userFills and
// clearinghouseState.
func TestFollowAccountLimitFillPositionCancel(t *testing.T) {
	s, a, c, clock := hlFeedVenue(t)
	ctx := context.Background()
	f := follow(t, a, c)
	f.waitReady(t)
	m := market(t, a, c, "BTC")
	book, err := s.Engine().Orderbook("BTC", 1)
	if err != nil {
		t.Fatal(err)
	}
	price := book.Asks[0].Price.Ceil()       // integers pass the 5-significant-figure rule
	size := decimal.RequireFromString("100") // more than the book holds up to price
	placed, err := a.PlaceLimitOrder(ctx, c, connector.OrderRequest{Market: m, Side: contract.Buy, Size: size, Price: price, ClientOrderID: "feed-1"})
	if err != nil {
		t.Fatal(err)
	}
	id := placed.OrderID
	i := f.until(t, 0, "a partly filled OPEN order", orderIs(id, contract.StatusOpen, positive))
	o := f.all()[i].Data.(contract.OrderEvent)
	if o.Type != "LIMIT" || o.Side != contract.Buy || !o.Size.Equal(size) || o.Price == nil || !o.Price.Equal(price) || o.AvgPrice != nil {
		t.Errorf("order event %+v: want LIMIT BUY %s at %s and no avgPrice (orderUpdates gives none)", o, size, price)
	}
	f.until(t, 0, "a taker fill", func(d any) bool {
		fl, ok := d.(contract.FillEvent)
		return ok && fl.OrderID == id && fl.Liquidity == "TAKER" && fl.Fee.IsPositive() && fl.FeeAsset == "USDC"
	})
	f.until(t, 0, "a LONG position", func(d any) bool {
		p, ok := d.(contract.PositionEvent)
		return ok && p.Market == "BTC" && p.Side == contract.Long && p.Size.IsPositive() && p.Leverage != nil
	})
	f.until(t, 0, "a balance", func(d any) bool {
		b, ok := d.(contract.BalanceEvent)
		return ok && b.Equity != nil && b.FreeCollateral != nil
	})

	// The mark falls through the limit: the rest fills as maker.
	clock.Advance(time.Second)
	if _, err := s.Engine().SetMarkPrice("BTC", price.Sub(decimal.NewFromInt(500))); err != nil {
		t.Fatal(err)
	}
	f.until(t, i+1, "the FILLED order", orderIs(id, contract.StatusFilled, func(d decimal.Decimal) bool { return d.Equal(size) }))
	f.until(t, 0, "a maker fill", func(d any) bool {
		fl, ok := d.(contract.FillEvent)
		return ok && fl.OrderID == id && fl.Liquidity == "MAKER"
	})
	f.until(t, i+1, "the whole position", func(d any) bool {
		p, ok := d.(contract.PositionEvent)
		return ok && p.Side == contract.Long && p.Size.Equal(size)
	})
	filled, ids := decimal.Zero, map[string]bool{}
	for _, ev := range f.all() {
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

	// A resting order and its cancel.
	far, err := a.PlaceLimitOrder(ctx, c, connector.OrderRequest{Market: m, Side: contract.Sell, Size: decimal.RequireFromString("0.01"),
		Price: price.Mul(decimal.NewFromInt(2))})
	if err != nil {
		t.Fatal(err)
	}
	k := f.until(t, 0, "the far order OPEN", orderIs(far.OrderID, contract.StatusOpen, zero))
	if err := a.CancelOrder(ctx, c, far.OrderID, &m); err != nil {
		t.Fatal(err)
	}
	k = f.until(t, k, "the far order CANCELLED", orderIs(far.OrderID, contract.StatusCancelled, zero))
	if r := f.all()[k].Data.(contract.OrderEvent).Reason; r != "" {
		t.Errorf("the owner's cancel has reason %q, want none", r)
	}
}

// TestFollowAccountFunding: an hourly settlement arrives as a funding
// event with the venue's rate and signed position size.
func TestFollowAccountFunding(t *testing.T) {
	s, a, c, clock := hlFeedVenue(t)
	m := market(t, a, c, "BTC")
	if _, err := a.PlaceMarketOrder(context.Background(), c, connector.OrderRequest{Market: m, Side: contract.Sell,
		Size: decimal.RequireFromString("0.1")}); err != nil {
		t.Fatal(err)
	}
	f := follow(t, a, c)
	f.waitReady(t)
	clock.Advance(time.Hour)
	s.Engine().Tick()
	i := f.until(t, 0, "a funding event", func(d any) bool {
		_, ok := d.(contract.FundingEvent)
		return ok
	})
	ev := f.all()[i].Data.(contract.FundingEvent)
	if ev.Market != "BTC" || ev.Rate == nil || ev.PositionSize == nil || !ev.PositionSize.Equal(decimal.RequireFromString("-0.1")) || ev.Amount.IsZero() {
		t.Errorf("funding event %+v: want BTC, a rate, positionSize -0.1 and an amount", ev)
	}
	for _, ev := range f.all() {
		if _, ok := ev.Data.(contract.FillEvent); ok {
			t.Errorf("the fill before the feed opened was emitted (%+v): the userFills snapshot must be skipped", ev.Data)
		}
	}
}

// TestFollowAccountRefusedKey: a key that is not account A's agent is
// refused before any subscription, AUTHENTICATION_FAILED with the reason.
func TestFollowAccountRefusedKey(t *testing.T) {
	_, a, _, _ := hlFeedVenue(t)
	c := credential("hl-wrong", accountA, agentKeyB)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	readied := false
	err := a.FollowAccount(ctx, c, func() { readied = true }, func(connector.AccountEvent) {})
	ce, ok := contract.AsError(err)
	if !ok || ce.Reason != contract.ReasonAuthenticationFailed || ce.ExchangeCode != "AGENT_NOT_APPROVED" ||
		!strings.Contains(ce.Message, "not an API wallet (agent) approved by account") {
		t.Fatalf("FollowAccount = %v, want AUTHENTICATION_FAILED naming the unapproved agent", err)
	}
	if readied || strings.Contains(strings.ToLower(ce.Error()), strings.TrimPrefix(agentKeyB, "0x")) {
		t.Errorf("ready called (%v) or the key in the error: %v", readied, ce)
	}
}

// TestFollowAccountDroppedAndRefused: a dropped socket ends FollowAccount
// with an error that is not an authentication failure (the runtime
// reconnects), and so does a subscription the venue refuses.
func TestFollowAccountDroppedAndRefused(t *testing.T) {
	s, a, c, _ := hlFeedVenue(t)
	f := follow(t, a, c)
	f.waitReady(t)
	s.DropStreams()
	select {
	case err := <-f.done:
		if ce, ok := contract.AsError(err); err == nil || (ok && ce.Reason == contract.ReasonAuthenticationFailed) {
			t.Fatalf("FollowAccount after a drop = %v, want a connection error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("FollowAccount still running 5 s after its socket was dropped")
	}

	s.RefuseSubscriptions("Cannot track more than 10 total users.")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	readied := false
	err := a.FollowAccount(ctx, c, func() { readied = true }, func(connector.AccountEvent) {})
	ce, ok := contract.AsError(err)
	if !ok || ce.Reason == contract.ReasonAuthenticationFailed || !strings.Contains(ce.Message, "Cannot track more than 10 total users.") || readied {
		t.Fatalf("FollowAccount on a refused subscription = %v (ready %v), want an error naming the venue's message, no ready", err, readied)
	}
}

// TestFollowAccountStopOrder: a trigger order's event says its type (as
// getOrders does) and trigger price, read once with orderStatus as
// orderUpdates carries neither, and PENDING, with no limit price.
func TestFollowAccountStopOrder(t *testing.T) {
	s, a, c, _ := hlFeedVenue(t)
	ctx := context.Background()
	m := market(t, a, c, "BTC")
	if _, err := a.PlaceMarketOrder(ctx, c, connector.OrderRequest{Market: m, Side: contract.Buy, Size: decimal.RequireFromString("0.1")}); err != nil {
		t.Fatal(err)
	}
	f := follow(t, a, c)
	f.waitReady(t)
	mark, err := s.Engine().MarkPrice("BTC")
	if err != nil {
		t.Fatal(err)
	}
	trigger := mark.Mark.Mul(decimal.RequireFromString("0.9")).Round(0)
	st, err := a.PlaceStopOrder(ctx, c, connector.OrderRequest{Market: m, Side: contract.Sell, Size: decimal.RequireFromString("0.1"),
		TriggerPrice: trigger, ReduceOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	i := f.until(t, 0, "the stop PENDING", orderIs(st.OrderID, contract.StatusPending, zero))
	o := f.all()[i].Data.(contract.OrderEvent)
	rest, err := a.GetOrders(ctx, c, &m)
	if err != nil || len(rest.Orders) != 1 {
		t.Fatalf("getOrders = %+v, %v", rest, err)
	}
	if want := rest.Orders[0].Type; o.Type != want || !strings.Contains(want, "MARKET") || o.TriggerPrice == nil ||
		!o.TriggerPrice.Equal(trigger) || o.Price != nil || !o.ReduceOnly {
		t.Errorf("stop event %+v: want type %s as getOrders says, trigger %s, no price, reduce-only", o, want, trigger)
	}
}
