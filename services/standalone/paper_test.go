package standalone

import (
	"net/http"
	"sync"
	"testing"

	"github.com/shopspring/decimal"
)

// setMark moves the paper mark price as the market would.
func (g *testGateway) setMark(market string, price string) {
	g.t.Helper()
	if _, err := g.PaperEngine().SetMarkPrice(market, decimal.RequireFromString(price)); err != nil {
		g.t.Fatalf("set mark: %v", err)
	}
}

func (g *testGateway) orders(market string) []map[string]any {
	g.t.Helper()
	return objects(g.t, g.ok(map[string]any{"operation": "getOrders", "market": market})["orders"])
}

func (g *testGateway) positions(market string) []map[string]any {
	g.t.Helper()
	return objects(g.t, g.ok(map[string]any{"operation": "getPositions", "market": market})["positions"])
}

func (g *testGateway) rejected(body map[string]any, reason string) {
	g.t.Helper()
	r := g.call(g.Bootstrap().APIKey, body)
	if r.status != http.StatusBadGateway || r.code() != "EXCHANGE_ERROR" || r.body["reason"] != reason {
		g.t.Fatalf("%v: want 502 EXCHANGE_ERROR %s, got %d %s", body["operation"], reason, r.status, r.raw)
	}
}

// TestPaperBehavesLikeAVenue checks the paper exchange's order life cycle
// through the real HTTP path.
func TestPaperBehavesLikeAVenue(t *testing.T) {
	g := startGateway(t)
	const eth = "ETH-USD-PERP"
	g.setMark(eth, "3000")

	t.Run("resting limit fills when price crosses", func(t *testing.T) {
		placed := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "ETH", "side": "BUY", "size": "1", "price": "2900"})
		os := g.orders("ETH")
		if len(os) != 1 || os[0]["id"] != placed["orderId"] || os[0]["status"] != "OPEN" {
			t.Fatalf("resting order not listed as OPEN: %v", os)
		}
		if len(g.positions("ETH")) != 0 {
			t.Fatal("a resting order must not open a position")
		}
		g.setMark(eth, "2899")
		if os := g.orders("ETH"); len(os) != 0 {
			t.Fatalf("order still open after the price crossed it: %v", os)
		}
		fills := objects(t, g.ok(map[string]any{"operation": "getFills", "market": "ETH"})["fills"])
		if len(fills) != 1 || fills[0]["price"] != "2900" || fills[0]["size"] != "1" || fills[0]["side"] != "BUY" {
			t.Fatalf("fill: %v", fills)
		}
		if fills[0]["fee"] != "0.58" { // maker 2 bps of 2900
			t.Errorf("maker fee: got %v, want 0.58", fills[0]["fee"])
		}
		ps := g.positions("ETH")
		if len(ps) != 1 || ps[0]["side"] != "LONG" || ps[0]["size"] != "1" || ps[0]["entryPrice"] != "2900" {
			t.Fatalf("position: %v", ps)
		}
	})

	t.Run("stop is pending until mark reaches trigger", func(t *testing.T) {
		g.setMark(eth, "2950")
		stop := g.ok(map[string]any{"operation": "placeStopOrder", "market": "ETH", "side": "SELL", "size": "0.4", "triggerPrice": "2800"})
		if stop["status"] != "PENDING" {
			t.Fatalf("stop: %v", stop)
		}
		g.setMark(eth, "2850")
		if os := g.orders("ETH"); len(os) != 1 || os[0]["status"] != "PENDING" {
			t.Fatalf("stop should still be pending above its trigger: %v", os)
		}
		g.setMark(eth, "2800")
		if os := g.orders("ETH"); len(os) != 0 {
			t.Fatalf("stop should have triggered: %v", os)
		}
		if ps := g.positions("ETH"); len(ps) != 1 || ps[0]["size"] != "0.6" {
			t.Fatalf("triggered reduce-only stop should leave 0.6: %v", ps)
		}
	})

	t.Run("postOnly that would cross is rejected", func(t *testing.T) {
		g.rejected(map[string]any{"operation": "placeLimitOrder", "market": "ETH", "side": "BUY", "size": "0.1",
			"price": "3500", "postOnly": true}, "POST_ONLY_REJECTED")
	})

	t.Run("reduceOnly cannot grow a position", func(t *testing.T) {
		g.rejected(map[string]any{"operation": "placeMarketOrder", "market": "ETH", "side": "BUY", "size": "0.1",
			"reduceOnly": true}, "INVALID_ORDER")
		capped := g.ok(map[string]any{"operation": "placeMarketOrder", "market": "ETH", "side": "SELL", "size": "5", "reduceOnly": true})
		if capped["filledSize"] != "0.6" {
			t.Fatalf("reduce-only larger than the position must be capped to 0.6, got %v", capped)
		}
		if ps := g.positions("ETH"); len(ps) != 0 {
			t.Fatalf("position should be flat: %v", ps)
		}
	})

	t.Run("closeAllPositions flattens", func(t *testing.T) {
		g.ok(map[string]any{"operation": "placeMarketOrder", "market": "SOL", "side": "SELL", "size": "10"})
		if ps := g.positions("SOL"); len(ps) != 1 || ps[0]["side"] != "SHORT" {
			t.Fatalf("short position: %v", ps)
		}
		closed := g.ok(map[string]any{"operation": "closeAllPositions", "market": "SOL"})
		if closed["closedSize"] != "10" {
			t.Fatalf("closed: %v", closed)
		}
		if ps := g.positions(""); len(ps) != 0 {
			t.Fatalf("positions after close: %v", ps)
		}
	})

	t.Run("fees and PnL are consistent with the fills", func(t *testing.T) {
		// Flat everywhere now: equity = start + realized PnL - fees, all from fills.
		pnl := decimal.Zero
		for _, m := range []string{"ETH", "SOL"} {
			fills := objects(t, g.ok(map[string]any{"operation": "getFills", "market": m})["fills"])
			for _, f := range fills {
				notional := dec(t, f["price"]).Mul(dec(t, f["size"]))
				if f["side"] == "BUY" {
					notional = notional.Neg()
				}
				pnl = pnl.Add(notional).Sub(dec(t, f["fee"]))
			}
		}
		bal := g.ok(map[string]any{"operation": "getBalance"})
		want := decimal.NewFromInt(10000).Add(pnl)
		if got := dec(t, bal["equity"]); !got.Equal(want) {
			t.Fatalf("equity %s, want 10000 + cash flows of fills %s = %s", got, pnl, want)
		}
		if !dec(t, bal["freeCollateral"]).Equal(want) {
			t.Fatalf("flat account: free collateral %v should equal equity %s", bal["freeCollateral"], want)
		}
	})
}

// TestClientOrderIDPlacesOnce repeats one placement, sequentially and
// concurrently: the venue sees one order and every answer is the first one.
func TestClientOrderIDPlacesOnce(t *testing.T) {
	g := startGateway(t)
	body := func() map[string]any {
		return map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
			"price": "1000", "clientOrderId": "my-order-1"}
	}
	first := g.ok(body())
	if first["clientOrderId"] != "my-order-1" {
		t.Fatalf("clientOrderId not echoed: %v", first)
	}
	var wg sync.WaitGroup
	ids := make([]any, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := g.call(g.Bootstrap().APIKey, body())
			ids[i] = r.body["orderId"]
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if id != first["orderId"] {
			t.Errorf("repeat %d got order %v, want the first %v", i, id, first["orderId"])
		}
	}
	if os := g.orders("BTC"); len(os) != 1 {
		t.Fatalf("want exactly one order at the venue, got %d", len(os))
	}
	auto := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "1000"})
	if s, _ := auto["clientOrderId"].(string); len(s) == 0 {
		t.Fatalf("gateway should assign a clientOrderId when none is given: %v", auto)
	}
}

// TestRounding: sizes round down to the lot, buy prices down and sell prices
// up to the tick; below the minimum notional is refused before the venue.
func TestRounding(t *testing.T) {
	g := startGateway(t)
	buy := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.0109", "price": "50000.19"})
	if buy["size"] != "0.01" || buy["price"] != "50000.1" {
		t.Errorf("buy rounding: %v", buy)
	}
	sell := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "SELL", "size": "0.0109", "price": "90000.11"})
	if sell["size"] != "0.01" || sell["price"] != "90000.2" {
		t.Errorf("sell rounding: %v", sell)
	}
	for _, tt := range []struct {
		name, size, price, want string
	}{
		{"size rounds to zero", "0.0004", "50000", "lot step"},
		{"below min notional", "0.001", "5000", "minimum notional"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := g.call(g.Bootstrap().APIKey, map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": tt.size, "price": tt.price})
			if r.status != 400 || r.code() != "INVALID_REQUEST" || !contains(r.body["error"].(string), tt.want) {
				t.Fatalf("got %d %s", r.status, r.raw)
			}
		})
	}
}
