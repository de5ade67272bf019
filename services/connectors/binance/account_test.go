package binance

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	"github.com/shopspring/decimal"
)

// accountFixture is an adapter whose private stream is the simulator's,
// on a clock that stands still so prices move only when the test says.
func accountFixture(t *testing.T) *fixture {
	t.Helper()
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }}, nil)
	f.a.cfg.MainnetStreamURL = venuekit.WSURL(f.url)
	// A book level is worth some 250k USDT: room to take one.
	if _, err := f.sim.Engine().EnsureAccount(testKey, decimal.NewFromInt(10_000_000)); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBinanceAccountFeed: a crossing limit order fills in part and rests,
// fills when the mark comes to it, opens a long; a resting order is
// cancelled. Events carry Binance's ids, sizes, fee and trade ids as
// getFills reports them.
func TestBinanceAccountFeed(t *testing.T) {
	f := accountFixture(t)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	feed := connectortest.Follow(t, f.a, f.cred)

	book, err := f.sim.Engine().Orderbook("BTCUSDT", 1)
	if err != nil {
		t.Fatal(err)
	}
	ask := book.Asks[0]
	size := ask.Size.Add(decimal.RequireFromString("0.01"))
	res, err := f.a.PlaceLimitOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: size, Price: ask.Price, ClientOrderID: "feed-1"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.OrderID
	first, _ := feed.Until(t, "the order, open", connectortest.OrderIs(id, contract.StatusOpen, "0"))
	if o := first.(contract.OrderEvent); o.ClientOrderID != "feed-1" || !o.Size.Equal(size) || o.Market != "BTCUSDT" || !o.Price.Equal(ask.Price) {
		t.Fatalf("new order event %+v", o)
	}
	// Binance tells a trade as the order's state with the trade in it:
	// the order event comes first, then its fill.
	feed.Until(t, "the order, open with the part filled", connectortest.OrderIs(id, contract.StatusOpen, ask.Size.String()))
	fill, _ := feed.Until(t, "the partial fill", connectortest.FillOf(id))
	fe := fill.(contract.FillEvent)
	if !fe.Size.Equal(ask.Size) || !fe.Price.Equal(ask.Price) || fe.Liquidity != "TAKER" || fe.FeeAsset != "USDT" || !fe.Fee.IsPositive() {
		t.Fatalf("partial fill %+v", fe)
	}
	feed.Until(t, "the position", connectortest.PositionIs("BTCUSDT", contract.Long, ask.Size.String()))

	if _, err := f.sim.Engine().SetMarkPrice("BTCUSDT", ask.Price.Sub(decimal.NewFromInt(50))); err != nil {
		t.Fatal(err)
	}
	feed.Until(t, "the order, filled", connectortest.OrderIs(id, contract.StatusFilled, size.String()))
	last, _ := feed.Until(t, "the rest's fill", connectortest.FillOf(id))
	if le := last.(contract.FillEvent); le.Liquidity != "MAKER" || !le.Size.Equal(decimal.RequireFromString("0.01")) {
		t.Fatalf("last fill %+v", le)
	}
	feed.Until(t, "the whole position", connectortest.PositionIs("BTCUSDT", contract.Long, size.String()))
	feed.Until(t, "the balance", func(d any) bool { b, ok := d.(contract.BalanceEvent); return ok && b.WalletBalance != nil })

	fills, err := f.a.GetFills(ctx, f.cred, m, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !hasFill(fills.Fills, fe.FillID, fe.Size, fe.Fee) {
		t.Fatalf("stream fill %+v is not in getFills %+v", fe, fills.Fills)
	}

	rest, err := f.a.PlaceLimitOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: decimal.RequireFromString("0.01"), Price: ask.Price.Sub(decimal.NewFromInt(5000)), ClientOrderID: "feed-2"})
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

// TestBinanceAccountRefused: a wrong secret is refused by the signed check
// before any listen key, with Binance's code; a listen key Binance will
// not create likewise.
func TestBinanceAccountRefused(t *testing.T) {
	f := accountFixture(t)
	err := connectortest.FollowRefused(t, f.a, credential(contract.Mainnet, testKey, "wrong"))
	connectortest.AuthRefused(t, err, "-1022", "Signature for this request is not valid")
	if n := f.sim.Hits(http.MethodPost, "/fapi/v1/listenKey"); n != 0 {
		t.Fatalf("%d listen keys asked with a wrong secret", n)
	}
	err = connectortest.FollowRefused(t, f.a, credential(contract.Mainnet, "nobody", testSecret))
	connectortest.AuthRefused(t, err, "-2015")
	f.sim.FailNext(http.MethodPost, "/fapi/v1/listenKey", sim.Failure{Status: 401, Code: -2015, Msg: "Invalid API-key, IP, or permissions for action."})
	err = connectortest.FollowRefused(t, f.a, f.cred)
	connectortest.AuthRefused(t, err, "-2015", "permissions")
}

// TestBinanceAccountDropAndExpiry: a dropped socket and an expired listen
// key each end the feed with an error (the runtime reconnects); the
// reconnect gets a working key and socket.
func TestBinanceAccountDropAndExpiry(t *testing.T) {
	f := accountFixture(t)
	feed := connectortest.Follow(t, f.a, f.cred)
	sockets := func(n int) {
		connectortest.Eventually(t, 3*time.Second, "the simulator holds the socket", func() bool { return f.sim.PrivateOpen() == n })
	}
	sockets(1)
	f.sim.DropPrivate()
	if err := feed.Ended(t, 5*time.Second); err == nil {
		t.Fatal("a dropped socket ended the feed without an error")
	}
	feed = connectortest.Follow(t, f.a, f.cred)
	sockets(1)
	f.sim.ExpireListenKey(testKey)
	err := feed.Ended(t, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "listen key expired") {
		t.Fatalf("expired listen key ended the feed with %v", err)
	}
	feed = connectortest.Follow(t, f.a, f.cred)
	connectortest.Eventually(t, 3*time.Second, "a third user data socket", func() bool { return f.sim.PrivateDials() == 3 })
	feed.Stop(t)
}

// TestBinanceListenKeyKeepAlive: the key is extended on schedule; when
// Binance no longer knows it (-1125) the feed ends.
func TestBinanceListenKeyKeepAlive(t *testing.T) {
	f := accountFixture(t)
	f.a.cfg.ListenKeyKeepAlive = 50 * time.Millisecond
	feed := connectortest.Follow(t, f.a, f.cred)
	connectortest.Eventually(t, 3*time.Second, "keepalives", func() bool { return f.sim.Hits(http.MethodPut, "/fapi/v1/listenKey") >= 2 })
	f.sim.FailNext(http.MethodPut, "/fapi/v1/listenKey", sim.Failure{Status: 400, Code: -1125, Msg: "This listenKey does not exist."})
	err := feed.Ended(t, 3*time.Second)
	if err == nil || !strings.Contains(err.Error(), "-1125") {
		t.Fatalf("refused keepalive ended the feed with %v", err)
	}
}

// TestBinanceUserEventFrames: documented frames
// (…/user-data-streams/Event-Balance-and-Position-Update,
// Event-Algo-Order-Update, Event-User-Data-Stream-Expired) normalized.
func TestBinanceUserEventFrames(t *testing.T) {
	var got []any
	emit := func(e connector.AccountEvent) {
		if e.Time.IsZero() {
			t.Errorf("event %+v without the venue's time", e.Data)
		}
		got = append(got, e.Data)
	}
	funding := `{"e":"ACCOUNT_UPDATE","E":1564745798939,"T":1564745798938,"a":{"m":"FUNDING_FEE",
		"B":[{"a":"USDT","wb":"122624.12345678","cw":"100.12345678","bc":"-0.50000000"}],
		"P":[{"s":"BTCUSDT","pa":"-0.010","ep":"9000.0","bep":"9000.0","cr":"200","up":"-0.1","mt":"isolated","iw":"0","ps":"BOTH"}]}}`
	if err := userEvents.Emit(emit)([]byte(funding)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("FUNDING_FEE gave %+v, want position, balance and funding", got)
	}
	p, b, f := got[0].(contract.PositionEvent), got[1].(contract.BalanceEvent), got[2].(contract.FundingEvent)
	if p.Side != contract.Short || p.Size.String() != "0.01" || p.Leverage != nil || p.LiquidationPrice != nil ||
		b.Asset != "USDT" || b.WalletBalance.String() != "122624.12345678" || b.Equity != nil ||
		f.Market != "BTCUSDT" || f.Amount.String() != "-0.5" || f.Rate != nil || f.PositionSize != nil {
		t.Fatalf("FUNDING_FEE events %+v %+v %+v", p, b, f)
	}
	got = nil
	cross := `{"e":"ACCOUNT_UPDATE","E":1564745798939,"T":1564745798938,"a":{"m":"FUNDING_FEE","B":[{"a":"USDT","wb":"10","cw":"10","bc":"-0.5"}],"P":[]}}`
	if err := userEvents.Emit(emit)([]byte(cross)); err != nil || len(got) != 1 {
		t.Fatalf("a cross position's funding gave %+v (%v), want the balance alone (Binance names no market)", got, err)
	}
	got = nil
	algo := `{"e":"ALGO_UPDATE","T":1750515742297,"E":1750515742303,"o":{"caid":"Q5xaq5EGKgXXa0fD7fs0Ip","aid":2148719,
		"at":"CONDITIONAL","o":"TAKE_PROFIT","s":"BNBUSDT","S":"SELL","ps":"BOTH","f":"GTC","q":"0.01","X":"CANCELED","ai":"",
		"ap":"0.00000","aq":"0.00000","act":"0","tp":"750","p":"750","V":"EXPIRE_MAKER","wt":"CONTRACT_PRICE","pm":"NONE",
		"cp":false,"pP":false,"R":false,"tt":0,"gtd":0,"rm":"Reduce Only reject"}}`
	if err := userEvents.Emit(emit)([]byte(algo)); err != nil || len(got) != 1 {
		t.Fatalf("ALGO_UPDATE gave %+v (%v)", got, err)
	}
	if o := got[0].(contract.OrderEvent); o.OrderID != "algo-2148719" || o.Status != contract.StatusCancelled || o.TriggerPrice.String() != "750" ||
		o.Price.String() != "750" || o.ClientOrderID != "Q5xaq5EGKgXXa0fD7fs0Ip" || o.AvgPrice != nil || !o.FilledSize.IsZero() {
		t.Fatalf("ALGO_UPDATE order %+v", o)
	}
	if err := userEvents.Emit(emit)([]byte(`{"e":"listenKeyExpired","E":1576653824250,"listenKey":"x"}`)); err == nil {
		t.Fatal("listenKeyExpired did not end the feed")
	}
}
