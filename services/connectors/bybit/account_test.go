package bybit

import (
	"context"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/bybit/sim"
	"github.com/shopspring/decimal"
)

// accountFixture: the simulator's clock stands still so prices move only
// when the test says; the account can take a whole book level.
func accountFixture(t *testing.T) *fixture {
	t.Helper()
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }}, nil)
	if _, err := f.sim.Engine().EnsureAccount(testKey, decimal.NewFromInt(10_000_000)); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBybitAccountFeed: limit → partial fill → fill → position, and a
// cancel, from the order, execution, position and wallet topics; fills
// carry the execId getFills reports.
func TestBybitAccountFeed(t *testing.T) {
	f := accountFixture(t)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	feed := connectortest.Follow(t, f.a, f.cred)

	book, err := f.sim.Engine().Orderbook("BTCUSDT", 1)
	if err != nil {
		t.Fatal(err)
	}
	ask := book.Asks[0]
	extra := decimal.RequireFromString("0.01")
	size := ask.Size.Add(extra)
	res, err := f.a.PlaceLimitOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: size, Price: ask.Price, ClientOrderID: "feed-1"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.OrderID
	first, _ := feed.Until(t, "the order, open", connectortest.OrderIs(id, contract.StatusOpen, "0"))
	if o := first.(contract.OrderEvent); o.ClientOrderID != "feed-1" || !o.Size.Equal(size) || o.Market != "BTCUSDT" || !o.Price.Equal(ask.Price) || o.Type != "LIMIT" {
		t.Fatalf("new order event %+v", o)
	}
	fill, _ := feed.Until(t, "the partial fill", connectortest.FillOf(id))
	fe := fill.(contract.FillEvent)
	if !fe.Size.Equal(ask.Size) || !fe.Price.Equal(ask.Price) || fe.Liquidity != "TAKER" || fe.FeeAsset != "USDT" || !fe.Fee.IsPositive() {
		t.Fatalf("partial fill %+v", fe)
	}
	feed.Until(t, "the position", connectortest.PositionIs("BTCUSDT", contract.Long, ask.Size.String()))
	feed.Until(t, "the order, open with the part filled", connectortest.OrderIs(id, contract.StatusOpen, ask.Size.String()))

	if _, err := f.sim.Engine().SetMarkPrice("BTCUSDT", ask.Price.Sub(decimal.NewFromInt(50))); err != nil {
		t.Fatal(err)
	}
	last, _ := feed.Until(t, "the rest's fill", connectortest.FillOf(id))
	if le := last.(contract.FillEvent); le.Liquidity != "MAKER" || !le.Size.Equal(extra) {
		t.Fatalf("last fill %+v", le)
	}
	pos, _ := feed.Until(t, "the whole position", connectortest.PositionIs("BTCUSDT", contract.Long, size.String()))
	if p := pos.(contract.PositionEvent); p.Leverage == nil || p.UnrealizedPnl == nil || !p.EntryPrice.IsPositive() {
		t.Fatalf("position event %+v", p)
	}
	bal, _ := feed.Until(t, "the balance", func(d any) bool { _, ok := d.(contract.BalanceEvent); return ok })
	if b := bal.(contract.BalanceEvent); b.Equity == nil || b.FreeCollateral == nil || b.WalletBalance == nil {
		t.Fatalf("balance event %+v", b)
	}
	feed.Until(t, "the order, filled", connectortest.OrderIs(id, contract.StatusFilled, size.String()))

	fills, err := f.a.GetFills(ctx, f.cred, m, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !hasFill(fills.Fills, fe.FillID, fe.Size, fe.Fee) {
		t.Fatalf("stream fill %+v is not in getFills %+v", fe, fills.Fills)
	}

	rest, err := f.a.PlaceLimitOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: extra, Price: ask.Price.Sub(decimal.NewFromInt(5000)), ClientOrderID: "feed-2"})
	if err != nil {
		t.Fatal(err)
	}
	feed.Until(t, "the second order", connectortest.OrderIs(rest.OrderID, contract.StatusOpen, "0"))
	if err := f.a.CancelOrder(ctx, f.cred, rest.OrderID, &m); err != nil {
		t.Fatal(err)
	}
	feed.Until(t, "the cancel", connectortest.OrderIs(rest.OrderID, contract.StatusCancelled, "0"))
}

func hasFill(fills []contract.Fill, id string, size, fee decimal.Decimal) bool {
	for _, f := range fills {
		if f.ID == id && f.Size.Equal(size) && f.Fee.Equal(fee) {
			return true
		}
	}
	return false
}

// TestBybitAccountFunding: an execType Funding row is a funding event,
// paid as a negative amount, with the rate and size Bybit gives.
func TestBybitAccountFunding(t *testing.T) {
	events, err := pushEvents("execution", []byte(`[{"category":"linear","symbol":"BTCUSDT","execFee":"0.75","execId":"f1",
		"execPrice":"0","execQty":"0.5","execType":"Funding","feeRate":"0.0001","execTime":"1700000000000","isMaker":false}]`))
	if err != nil || len(events) != 1 {
		t.Fatalf("%v %v", events, err)
	}
	f, ok := events[0].(contract.FundingEvent)
	if !ok || f.Market != "BTCUSDT" || f.Amount.String() != "-0.75" || f.Rate.String() != "0.0001" || f.PositionSize.String() != "0.5" {
		t.Fatalf("funding event %+v", events[0])
	}
}

// TestBybitAccountRefused: a wrong secret and a key Bybit does not know
// are refused at auth with Bybit's ret_msg.
func TestBybitAccountRefused(t *testing.T) {
	f := accountFixture(t)
	err := connectortest.FollowRefused(t, f.a, credential(contract.Mainnet, testKey, "wrong", false))
	connectortest.AuthRefused(t, err, "Request not authorized")
	err = connectortest.FollowRefused(t, f.a, credential(contract.Mainnet, "nobody", testSecret, false))
	connectortest.AuthRefused(t, err, "Invalid apikey")
	f.sim.RefuseNextAuth("Params Error")
	err = connectortest.FollowRefused(t, f.a, f.cred)
	connectortest.AuthRefused(t, err, "Params Error")
}

// TestBybitAccountDropped: a dropped socket ends the feed with an error
// (the runtime reconnects), and the next one works.
func TestBybitAccountDropped(t *testing.T) {
	f := accountFixture(t)
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

// TestBybitPrivateHosts: each credential's private socket is on its own
// REST host's stream host: mainnet, testnet, demo.
func TestBybitPrivateHosts(t *testing.T) {
	c := DefaultConfig()
	for _, tt := range []struct {
		env  contract.Environment
		demo bool
		want string
	}{{contract.Mainnet, false, MainnetPrivateURL}, {contract.Testnet, false, TestnetPrivateURL}, {contract.Testnet, true, DemoPrivateURL}} {
		if got := c.privateURL(tt.env, tt.demo); got != tt.want {
			t.Errorf("%s demo=%v: %s, want %s", tt.env, tt.demo, got, tt.want)
		}
	}
	c.MainnetURL = "http://127.0.0.1:9"
	if got := c.privateURL(contract.Mainnet, false); got != "ws://127.0.0.1:9/v5/private" {
		t.Errorf("simulator host: %s", got)
	}
}

// TestBybitAccountPostOnlyTaken: a post-only order Bybit accepts and
// cancels because it would take is a REJECTED order event saying why.
func TestBybitAccountPostOnlyTaken(t *testing.T) {
	f := accountFixture(t)
	m := f.market(t, "BTCUSDT")
	feed := connectortest.Follow(t, f.a, f.cred)
	book, err := f.sim.Engine().Orderbook("BTCUSDT", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.a.PlaceLimitOrder(context.Background(), f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: decimal.RequireFromString("0.01"), Price: book.Asks[0].Price, PostOnly: true, ClientOrderID: "po-1"})
	if err == nil {
		t.Fatal("a post-only order that would take was answered as placed")
	}
	got, _ := feed.Until(t, "the rejected order", func(d any) bool {
		o, ok := d.(contract.OrderEvent)
		return ok && o.ClientOrderID == "po-1"
	})
	if o := got.(contract.OrderEvent); o.Status != contract.StatusRejected || o.Reason != "post_only_would_take" {
		t.Fatalf("order event %+v, want REJECTED post_only_would_take", o)
	}
}
