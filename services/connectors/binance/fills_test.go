package binance

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	"github.com/shopspring/decimal"
)

// tradesOf sums the simulator's own record of an order's fills: what the
// adapter must report.
func tradesOf(t *testing.T, s *sim.Server, key, symbol, orderID string) (size, notional, fee decimal.Decimal, n int) {
	t.Helper()
	fills, err := s.Engine().Fills(key, symbol, 1000)
	if err != nil {
		t.Fatal(err)
	}
	size, notional, fee = decimal.Zero, decimal.Zero, decimal.Zero
	for _, f := range fills {
		if binanceOrderID(f.OrderID) != orderID {
			continue
		}
		size, notional, fee, n = size.Add(f.Size), notional.Add(f.Size.Mul(f.Price)), fee.Add(f.Fee), n+1
	}
	return size, notional, fee, n
}

// binanceOrderID is the simulator's Binance id of a paper order id.
func binanceOrderID(paperID string) string {
	return decimal.RequireFromString(paperID).Add(decimal.NewFromInt(3_961_340_000)).String()
}

func marketOrder(m connector.Market, side contract.Side, size, clientID string) connector.OrderRequest {
	return connector.OrderRequest{Market: m, Type: connector.MarketType, Side: side,
		Size: decimal.RequireFromString(size), ClientOrderID: clientID}
}

// TestMarketOrderFillFromTrades: Binance's order answer has no fee and no
// average price; the adapter reads them from the order's trades. A market
// order that walks several book levels reports the size-weighted price
// and the summed commissions of exactly its own trades.
func TestMarketOrderFillFromTrades(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	// A book level holds at most about 372,000 USDT: 5 BTC takes two or more.
	if _, err := f.a.SetLeverage(ctx, f.cred, m, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Buy, "0.3", "first")); err != nil {
		t.Fatal(err) // an earlier order whose trades must not be counted
	}
	res, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Buy, "5", "second"))
	if err != nil {
		t.Fatal(err)
	}
	size, notional, fee, n := tradesOf(t, f.sim, testKey, "BTCUSDT", res.OrderID)
	if n < 2 {
		t.Fatalf("want an order that fills in several trades, got %d", n)
	}
	wantPrice := notional.DivRound(size, 8)
	if !res.FilledSize.Equal(decimal.RequireFromString("5")) || !res.FilledPrice.Equal(wantPrice) || !res.Fee.Equal(fee) || !fee.IsPositive() {
		t.Errorf("got size %s price %s fee %s; want 5 %s %s (from %d trades)", res.FilledSize, res.FilledPrice, res.Fee, wantPrice, fee, n)
	}
	if res.Market != "BTCUSDT" || res.Side != contract.Buy {
		t.Errorf("market %s side %s", res.Market, res.Side)
	}
}

// TestMarketOrderTradesLag: the trade list trails the order answer once;
// the adapter reads it again instead of reporting a zero fee.
func TestMarketOrderTradesLag(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	f.a.c.Wait = func(_ context.Context, d time.Duration) error { f.waits = append(f.waits, d); return nil }
	ctx := context.Background()
	m := f.market(t, "ETHUSDT")
	f.sim.RewriteNext(http.MethodGet, "/fapi/v1/userTrades", func([]byte) []byte { return []byte("[]") })
	res, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Sell, "1.5", "lag1"))
	if err != nil {
		t.Fatal(err)
	}
	size, notional, fee, _ := tradesOf(t, f.sim, testKey, "ETHUSDT", res.OrderID)
	if !res.FilledSize.Equal(size) || !res.FilledPrice.Equal(notional.DivRound(size, 8)) || !res.Fee.Equal(fee) || !fee.IsPositive() {
		t.Errorf("got %+v; want size %s fee %s", res, size, fee)
	}
	if n := f.sim.Hits(http.MethodGet, "/fapi/v1/userTrades"); n != 2 {
		t.Errorf("trades read %d times, want 2", n)
	}
	if len(f.waits) != 1 || f.waits[0] != fapi.TradeWaits[1] {
		t.Errorf("waits %v, want one of %s", f.waits, fapi.TradeWaits[1])
	}
}

// TestMarketOrderTradesNeverArrive: when the trades never account for the
// executed size, the size is Binance's executedQty and the price Query
// Order's avgPrice; the placement still succeeds (it happened).
func TestMarketOrderTradesNeverArrive(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	f.a.c.Wait = func(context.Context, time.Duration) error { return nil }
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	for range fapi.TradeWaits {
		f.sim.RewriteNext(http.MethodGet, "/fapi/v1/userTrades", func([]byte) []byte { return []byte("[]") })
	}
	res, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Buy, "0.2", "late1"))
	if err != nil {
		t.Fatal(err)
	}
	var po paper.Order
	open, _ := f.sim.Engine().Fills(testKey, "BTCUSDT", 10)
	for _, fl := range open {
		if binanceOrderID(fl.OrderID) == res.OrderID {
			po, _ = f.sim.Engine().Order(testKey, fl.OrderID)
		}
	}
	if !res.FilledSize.Equal(decimal.RequireFromString("0.2")) || !res.FilledPrice.Equal(po.AvgFillPrice) || !po.AvgFillPrice.IsPositive() {
		t.Errorf("got %+v; want size 0.2 price %s", res, po.AvgFillPrice)
	}
	if n := f.sim.Hits(http.MethodGet, "/fapi/v1/order"); n != 1 {
		t.Errorf("Query Order asked %d times, want 1", n)
	}
}

// TestCloseAllSplitsAndAverages: a position larger than MARKET_LOT_SIZE
// maxQty is closed in pieces (Binance refuses larger market orders with
// -4005), and avgClosePrice is weighted over every closing trade.
func TestCloseAllSplitsAndAverages(t *testing.T) {
	d := decimal.RequireFromString
	f := newFixture(t, sim.Config{MarketMaxQty: map[string]decimal.Decimal{"BTCUSDT": d("0.1")}}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	for i, size := range []string{"0.1", "0.1", "0.05"} {
		if _, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Sell, size, "open"+itoa(int64(i)))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Sell, "0.2", "too-big")); err == nil {
		t.Fatal("the simulator took a market order above maxQty")
	}
	before, _ := f.sim.Engine().Fills(testKey, "BTCUSDT", 1000)
	orders := f.sim.Hits(http.MethodPost, "/fapi/v1/order")
	res, err := f.a.CloseAllPositions(ctx, f.cred, m)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.sim.Hits(http.MethodPost, "/fapi/v1/order") - orders; n != 3 {
		t.Errorf("close sent %d orders, want 3 (0.1 + 0.1 + 0.05)", n)
	}
	after, _ := f.sim.Engine().Fills(testKey, "BTCUSDT", 1000)
	size, notional := decimal.Zero, decimal.Zero
	for _, fl := range after[:len(after)-len(before)] {
		if fl.Side != paper.Buy {
			t.Errorf("closing fill %+v is not a buy", fl)
		}
		size, notional = size.Add(fl.Size), notional.Add(fl.Size.Mul(fl.Price))
	}
	if !res.ClosedSize.Equal(d("0.25")) || !size.Equal(d("0.25")) || !res.AvgClosePrice.Equal(notional.DivRound(size, 8)) {
		t.Errorf("got %+v; want 0.25 at %s", res, notional.DivRound(size, 8))
	}
	if ps, _ := f.sim.Engine().Positions(testKey, "BTCUSDT"); len(ps) != 0 {
		t.Errorf("position left: %+v", ps)
	}
}
