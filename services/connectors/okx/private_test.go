package okx

import (
	"context"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/okx/sim"
	"github.com/shopspring/decimal"
)

// privateFixture: the simulator's clock stands still so prices move only
// when the test says; the account can take a whole book level.
func privateFixture(t *testing.T) *fixture {
	t.Helper()
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }}, nil)
	if _, err := f.sim.Engine().EnsureAccount(testKey, decimal.NewFromInt(10_000_000)); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestOKXAccountFeed: limit → partial fill → fill → position, and a
// cancel, on a swap of ctVal 0.01 (BTC) and one of ctVal 10 (DOGE): the
// events' sizes, in base units, equal what getOrders (FindOrder),
// getFills and getPositions answer for the same orders.
func TestOKXAccountFeed(t *testing.T) {
	for _, inst := range []string{"BTC-USDT-SWAP", "DOGE-USDT-SWAP"} {
		t.Run(inst, func(t *testing.T) { okxFeedScenario(t, inst) })
	}
}

func okxFeedScenario(t *testing.T, inst string) {
	f := privateFixture(t)
	ctx := context.Background()
	m := f.market(t, inst)
	feed := connectortest.Follow(t, f.a, f.cred)

	book, err := f.sim.Engine().Orderbook(inst, 1)
	if err != nil {
		t.Fatal(err)
	}
	ask := book.Asks[0]
	extra := m.LotSize.Mul(decimal.NewFromInt(100))
	size := ask.Size.Add(extra)
	res, err := f.a.PlaceLimitOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: size, Price: ask.Price, ClientOrderID: "feed1"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.OrderID
	first, _ := feed.Until(t, "the order, open", connectortest.OrderIs(id, contract.StatusOpen, "0"))
	if o := first.(contract.OrderEvent); o.ClientOrderID != "feed1" || !o.Size.Equal(size) || o.Market != inst || !o.Price.Equal(ask.Price) {
		t.Fatalf("new order event %+v, want size %s", o, size)
	}
	// OKX tells a fill in the order's push: the order, then its fill.
	feed.Until(t, "the order, open with the part filled", connectortest.OrderIs(id, contract.StatusOpen, ask.Size.String()))
	fill, _ := feed.Until(t, "the partial fill", connectortest.FillOf(id))
	fe := fill.(contract.FillEvent)
	if !fe.Size.Equal(ask.Size) || !fe.Price.Equal(ask.Price) || fe.Liquidity != "TAKER" || fe.FeeAsset != "USDT" || !fe.Fee.IsPositive() {
		t.Fatalf("partial fill %+v, want size %s", fe, ask.Size)
	}
	feed.Until(t, "the position", connectortest.PositionIs(inst, contract.Long, ask.Size.String()))

	if _, err := f.sim.Engine().SetMarkPrice(inst, ask.Price.Mul(decimal.RequireFromString("0.99"))); err != nil {
		t.Fatal(err)
	}
	feed.Until(t, "the order, filled", connectortest.OrderIs(id, contract.StatusFilled, size.String()))
	last, _ := feed.Until(t, "the rest's fill", connectortest.FillOf(id))
	if le := last.(contract.FillEvent); le.Liquidity != "MAKER" || !le.Size.Equal(extra) {
		t.Fatalf("last fill %+v, want size %s", le, extra)
	}
	pos, _ := feed.Until(t, "the whole position", connectortest.PositionIs(inst, contract.Long, size.String()))
	feed.Until(t, "the balance", func(d any) bool {
		b, ok := d.(contract.BalanceEvent)
		return ok && b.Asset == "USDT" && b.WalletBalance != nil
	})

	sameAsREST(t, f, m, "feed1", size, []contract.FillEvent{fe, last.(contract.FillEvent)}, pos.(contract.PositionEvent))

	rest, err := f.a.PlaceLimitOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: extra, Price: ask.Price.Mul(decimal.RequireFromString("0.9")).Div(m.TickSize).Floor().Mul(m.TickSize), ClientOrderID: "feed2"})
	if err != nil {
		t.Fatal(err)
	}
	feed.Until(t, "the second order", connectortest.OrderIs(rest.OrderID, contract.StatusOpen, "0"))
	if err := f.a.CancelOrder(ctx, f.cred, rest.OrderID, &m); err != nil {
		t.Fatal(err)
	}
	feed.Until(t, "the cancel", connectortest.OrderIs(rest.OrderID, contract.StatusCancelled, "0"))
}

// sameAsREST compares the stream's sizes with the REST answers.
func sameAsREST(t *testing.T, f *fixture, m connector.Market, clientID string, size decimal.Decimal, fills []contract.FillEvent, pos contract.PositionEvent) {
	t.Helper()
	ctx := context.Background()
	o, found, err := f.a.FindOrder(ctx, f.cred, m, clientID)
	if err != nil || !found || !o.Size.Equal(size) || !o.FilledSize.Equal(size) {
		t.Fatalf("REST order %+v (found %v, %v), stream size %s", o, found, err, size)
	}
	got, err := f.a.GetFills(ctx, f.cred, m, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, fe := range fills {
		ok := false
		for _, rf := range got.Fills {
			ok = ok || (rf.ID == fe.FillID && rf.Size.Equal(fe.Size) && rf.Fee.Equal(fe.Fee) && rf.Price.Equal(fe.Price))
		}
		if !ok {
			t.Fatalf("stream fill %+v is not in getFills %+v", fe, got.Fills)
		}
	}
	ps, err := f.a.GetPositions(ctx, f.cred, &m)
	if err != nil || len(ps.Positions) != 1 || !ps.Positions[0].Size.Equal(pos.Size) || !ps.Positions[0].EntryPrice.Equal(pos.EntryPrice) {
		t.Fatalf("REST positions %+v (%v), stream %+v", ps.Positions, err, pos)
	}
}

// TestOKXAccountRefused: a wrong secret, a wrong passphrase and a key OKX
// refuses are AUTHENTICATION_FAILED with OKX's code and message.
func TestOKXAccountRefused(t *testing.T) {
	f := privateFixture(t)
	err := connectortest.FollowRefused(t, f.a, credential(contract.Mainnet, testKey, "wrong", testPassphrase))
	connectortest.AuthRefused(t, err, "60007", "Invalid sign")
	err = connectortest.FollowRefused(t, f.a, credential(contract.Mainnet, testKey, testSecret, "wrong"))
	connectortest.AuthRefused(t, err, "60024")
	f.sim.RefuseNextLogin(sim.Failure{Code: "60009", Msg: "Login failed."})
	err = connectortest.FollowRefused(t, f.a, f.cred)
	connectortest.AuthRefused(t, err, "60009", "Login failed")
}

// TestOKXAccountDropped: a dropped socket ends the feed with an error (the
// runtime reconnects), and the next one works.
func TestOKXAccountDropped(t *testing.T) {
	f := privateFixture(t)
	feed := connectortest.Follow(t, f.a, f.cred)
	f.sim.DropPrivate()
	if err := feed.Ended(t, 5*time.Second); err == nil {
		t.Fatal("a dropped socket ended the feed without an error")
	}
	connectortest.Follow(t, f.a, f.cred).Stop(t)
	if n := f.sim.PrivateDials(); n != 2 {
		t.Fatalf("%d private sockets, want 2", n)
	}
}

// TestOKXPrivateHosts: live and demo (testnet) credentials use their own
// private hosts; a simulator serves it beside its REST base.
func TestOKXPrivateHosts(t *testing.T) {
	c := DefaultConfig()
	if got := c.privateURL(contract.Mainnet); got != LivePrivateURL {
		t.Errorf("mainnet: %s", got)
	}
	if got := c.privateURL(contract.Testnet); got != DemoPrivateURL {
		t.Errorf("testnet: %s", got)
	}
	c.MainnetURL = "http://127.0.0.1:9"
	if got := c.privateURL(contract.Mainnet); got != "ws://127.0.0.1:9/ws/v5/private" {
		t.Errorf("simulator: %s", got)
	}
}

// TestOKXAccountPostOnlyTaken: a post-only order OKX accepts and cancels
// because it would take (cancelSource 31) is a REJECTED order event.
func TestOKXAccountPostOnlyTaken(t *testing.T) {
	f := privateFixture(t)
	m := f.market(t, "BTC-USDT-SWAP")
	feed := connectortest.Follow(t, f.a, f.cred)
	book, err := f.sim.Engine().Orderbook("BTC-USDT-SWAP", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.a.PlaceLimitOrder(context.Background(), f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: decimal.RequireFromString("0.01"), Price: book.Asks[0].Price, PostOnly: true, ClientOrderID: "po1"})
	if err == nil {
		t.Fatal("a post-only order that would take was answered as placed")
	}
	got, _ := feed.Until(t, "the rejected order", func(d any) bool {
		o, ok := d.(contract.OrderEvent)
		return ok && o.ClientOrderID == "po1"
	})
	if o := got.(contract.OrderEvent); o.Status != contract.StatusRejected || o.Reason != "post_only_would_take" || !o.Size.Equal(decimal.RequireFromString("0.01")) {
		t.Fatalf("order event %+v, want REJECTED post_only_would_take of 0.01", o)
	}
}
