package standalone

import (
	"fmt"
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// Wire kinds of SPEC §2/§4 fields.
type kind int

const (
	decStr  kind = iota // decimal carried as a plain JSON string
	unixSec             // Unix seconds as a JSON number
	str                 // non-empty string
	integer             // JSON number without fraction
	boolean
	array
)

var plainDecimal = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$`)

// requireFields checks that obj has every field with its wire kind.
func requireFields(t *testing.T, where string, obj map[string]any, spec map[string]kind) {
	t.Helper()
	for name, k := range spec {
		v, ok := obj[name]
		if !ok {
			t.Errorf("%s: field %q missing in %v", where, name, obj)
			continue
		}
		if err := checkKind(v, k); err != nil {
			t.Errorf("%s: field %q = %#v: %v", where, name, v, err)
		}
	}
}

func checkKind(v any, k kind) error {
	switch k {
	case decStr:
		s, ok := v.(string)
		if !ok || !plainDecimal.MatchString(s) {
			return fmt.Errorf("want a plain decimal string (no exponent, no trailing zeros)")
		}
	case unixSec:
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || f < 1.5e9 || f > 4e9 {
			return fmt.Errorf("want Unix seconds as a JSON number")
		}
	case str:
		if s, ok := v.(string); !ok || s == "" {
			return fmt.Errorf("want a non-empty string")
		}
	case integer:
		if f, ok := v.(float64); !ok || f != math.Trunc(f) {
			return fmt.Errorf("want an integer JSON number")
		}
	case boolean:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("want a boolean")
		}
	case array:
		if _, ok := v.([]any); !ok {
			return fmt.Errorf("want an array")
		}
	}
	return nil
}

func objects(t *testing.T, v any) []map[string]any {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("want an array, got %#v", v)
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		if out[i], ok = e.(map[string]any); !ok {
			t.Fatalf("item %d is not an object: %#v", i, e)
		}
	}
	return out
}

func dec(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	s, _ := v.(string)
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("not a decimal: %#v", v)
	}
	return d
}

func checkLevels(t *testing.T, where string, v any, n int) {
	t.Helper()
	levels, ok := v.([]any)
	if !ok || len(levels) != n {
		t.Fatalf("%s: want %d levels, got %#v", where, n, v)
	}
	for i, l := range levels {
		pair, ok := l.([]any)
		if !ok || len(pair) != 2 || checkKind(pair[0], decStr) != nil || checkKind(pair[1], decStr) != nil {
			t.Fatalf("%s[%d]: want [price string, size string], got %#v", where, i, l)
		}
	}
}

// TestAllOperations drives the 20 operations through the real HTTP server on
// paper and checks every response field of SPEC §4 by name and wire type.
func TestAllOperations(t *testing.T) {
	g := startGateway(t)
	const btc = "BTC-USD-PERP"

	book := g.ok(map[string]any{"operation": "getOrderbook", "market": "BTC", "depth": 5})
	checkLevels(t, "bids", book["bids"], 5)
	checkLevels(t, "asks", book["asks"], 5)
	bestBid := dec(t, book["bids"].([]any)[0].([]any)[0])
	bestAsk := dec(t, book["asks"].([]any)[0].([]any)[0])
	if !bestBid.LessThan(bestAsk) {
		t.Errorf("crossed book: bid %s ask %s", bestBid, bestAsk)
	}
	if d := g.ok(map[string]any{"operation": "getOrderbook", "market": "BTC"}); len(d["bids"].([]any)) != 20 {
		t.Errorf("default depth: want 20 levels, got %d", len(d["bids"].([]any)))
	}

	mark := g.ok(map[string]any{"operation": "getMarkPrice", "market": "btc"})
	requireFields(t, "getMarkPrice", mark, map[string]kind{"markPrice": decStr, "indexPrice": decStr})

	candles := g.ok(map[string]any{"operation": "getCandles", "market": "ETH/USDT-P", "interval": "15", "limit": 10})
	cs := objects(t, candles["candles"])
	if len(cs) != 10 {
		t.Fatalf("want 10 candles, got %d", len(cs))
	}
	for i, c := range cs {
		requireFields(t, "candle", c, map[string]kind{"time": unixSec, "open": decStr, "high": decStr, "low": decStr, "close": decStr, "volume": decStr})
		if int64(c["time"].(float64))%900 != 0 {
			t.Errorf("candle %d time %v not aligned to 15 minutes", i, c["time"])
		}
		if dec(t, c["low"]).GreaterThan(dec(t, c["open"])) || dec(t, c["high"]).LessThan(dec(t, c["close"])) {
			t.Errorf("candle %d OHLC inconsistent: %v", i, c)
		}
		if i > 0 && c["time"].(float64) <= cs[i-1]["time"].(float64) {
			t.Errorf("candles not oldest first")
		}
	}
	if d := g.ok(map[string]any{"operation": "getCandles", "market": "ETH"}); len(d["candles"].([]any)) != 100 {
		t.Errorf("default candle limit: want 100, got %d", len(d["candles"].([]any)))
	}

	funding := g.ok(map[string]any{"operation": "getFundingRate", "market": "SOL-PERP"})
	requireFields(t, "getFundingRate", funding, map[string]kind{"fundingRate": decStr, "nextFundingTime": unixSec})
	if int64(funding["nextFundingTime"].(float64)) <= time.Now().Unix() {
		t.Errorf("nextFundingTime %v is not in the future", funding["nextFundingTime"])
	}

	markets := objects(t, g.ok(map[string]any{"operation": "getMarketsWithFunding"})["markets"])
	seen := map[string]bool{}
	for _, m := range markets {
		requireFields(t, "market entry", m, map[string]kind{"symbol": str, "markPrice": decStr, "fundingRate": decStr, "openInterest": decStr})
		seen[m["symbol"].(string)] = true
	}
	for _, want := range []string{btc, "ETH-USD-PERP", "SOL-USD-PERP"} {
		if !seen[want] {
			t.Errorf("getMarketsWithFunding lacks %s: %v", want, seen)
		}
	}

	fees := g.ok(map[string]any{"operation": "getFeeInfo", "market": "BTC"})
	requireFields(t, "getFeeInfo", fees, map[string]kind{"makerFee": decStr, "takerFee": decStr})
	if fees["makerFee"] != "2" || fees["takerFee"] != "5" {
		t.Errorf("fees in bps: got maker %v taker %v, want 2 and 5", fees["makerFee"], fees["takerFee"])
	}

	bal := g.ok(map[string]any{"operation": "getBalance"})
	requireFields(t, "getBalance", bal, map[string]kind{"exchange_type": str, "equity": decStr, "freeCollateral": decStr, "accountValue": decStr})
	if bal["exchange_type"] != "paper" || bal["equity"] != "10000" {
		t.Errorf("getBalance: %v", bal)
	}

	tc := g.ok(map[string]any{"operation": "testCredentials"})
	if tc["valid"] != true || tc["exchange"] != "paper" {
		t.Errorf("testCredentials: %v", tc)
	}

	lev := g.ok(map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 5})
	if lev["leverage"] != float64(5) {
		t.Errorf("setLeverage: %v", lev)
	}

	markPx := dec(t, mark["markPrice"])
	farBelow := markPx.Mul(decimal.RequireFromString("0.8")).Round(0).String()
	limit := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.010", "price": farBelow})
	requireFields(t, "placeLimitOrder", limit, map[string]kind{"orderId": str, "market": str, "side": str, "size": decStr, "price": decStr, "status": str})
	if limit["market"] != btc || limit["side"] != "BUY" || limit["size"] != "0.01" || limit["status"] != "OPEN" {
		t.Errorf("placeLimitOrder: %v", limit)
	}

	orders := objects(t, g.ok(map[string]any{"operation": "getOrders", "market": "BTC"})["orders"])
	if len(orders) != 1 || orders[0]["id"] != limit["orderId"] {
		t.Fatalf("getOrders: %v", orders)
	}
	requireFields(t, "order", orders[0], map[string]kind{"id": str, "market": str, "side": str, "type": str, "size": decStr,
		"price": decStr, "filledSize": decStr, "status": str, "createdAt": unixSec})
	if orders[0]["status"] != "OPEN" || orders[0]["type"] != "LIMIT" || orders[0]["market"] != btc {
		t.Errorf("order: %v", orders[0])
	}

	mkt := g.ok(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.1"})
	requireFields(t, "placeMarketOrder", mkt, map[string]kind{"orderId": str, "filledPrice": decStr, "filledSize": decStr, "fee": decStr})
	if mkt["filledSize"] != "0.1" || !dec(t, mkt["fee"]).IsPositive() {
		t.Errorf("placeMarketOrder: %v", mkt)
	}

	positions := objects(t, g.ok(map[string]any{"operation": "getPositions"})["positions"])
	if len(positions) != 1 {
		t.Fatalf("getPositions: %v", positions)
	}
	requireFields(t, "position", positions[0], map[string]kind{"market": str, "side": str, "size": decStr, "entryPrice": decStr,
		"markPrice": decStr, "unrealizedPnl": decStr, "leverage": decStr})
	if positions[0]["side"] != "LONG" || positions[0]["size"] != "0.1" || positions[0]["leverage"] != "5" || positions[0]["market"] != btc {
		t.Errorf("position: %v", positions[0])
	}

	fills := objects(t, g.ok(map[string]any{"operation": "getFills", "market": "BTC"})["fills"])
	if len(fills) == 0 {
		t.Fatal("getFills: no fills after a market order")
	}
	for _, f := range fills {
		requireFields(t, "fill", f, map[string]kind{"id": str, "market": str, "side": str, "size": decStr, "price": decStr, "fee": decStr, "timestamp": unixSec})
	}

	trigger := markPx.Mul(decimal.RequireFromString("0.9")).Round(0).String()
	stop := g.ok(map[string]any{"operation": "placeStopOrder", "market": "BTC", "side": "SELL", "size": "0.1", "triggerPrice": trigger})
	requireFields(t, "placeStopOrder", stop, map[string]kind{"orderId": str, "status": str, "triggerPrice": decStr})
	if stop["status"] != "PENDING" || stop["triggerPrice"] != trigger {
		t.Errorf("placeStopOrder: %v", stop)
	}

	prot := g.ok(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.1",
		"entryPrice": positions[0]["entryPrice"], "tpPercent": 5, "slPercent": "2.5"})
	requireFields(t, "placeProtectionOrders", prot, map[string]kind{"tpOrderId": str, "slOrderId": str})

	batch := g.ok(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
		{"market": "BTC", "side": "BUY", "size": "0.01", "price": farBelow, "orderType": "LIMIT"},
		{"market": "ETH", "side": "SELL", "size": "0.1", "price": "100000"},
	}})
	results := objects(t, batch["results"])
	if len(results) != 2 {
		t.Fatalf("placeBatchOrder: %v", batch)
	}
	for _, r := range results {
		requireFields(t, "batch result", r, map[string]kind{"orderId": str, "status": str})
		if r["status"] != "OPEN" {
			t.Errorf("batch result: %v", r)
		}
	}

	cancel := g.ok(map[string]any{"operation": "cancelOrder", "orderId": limit["orderId"], "market": "BTC"})
	if len(cancel) != 1 {
		t.Errorf("cancelOrder answers success only, got %v", cancel)
	}
	open := objects(t, g.ok(map[string]any{"operation": "getOrders"})["orders"])
	if len(open) != 5 { // batch 2 + stop + take-profit + stop-loss
		t.Fatalf("want 5 open orders, got %d: %v", len(open), open)
	}

	cancelled := g.ok(map[string]any{"operation": "cancelAllOrders", "market": "BTC"})
	requireFields(t, "cancelAllOrders", cancelled, map[string]kind{"cancelledCount": integer})
	if cancelled["cancelledCount"] != float64(4) {
		t.Errorf("cancelAllOrders on BTC: want 4 (batch BTC leg, stop, tp, sl), got %v", cancelled["cancelledCount"])
	}

	closed := g.ok(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
	requireFields(t, "closeAllPositions", closed, map[string]kind{"closedSize": decStr, "avgClosePrice": decStr})
	if closed["closedSize"] != "0.1" {
		t.Errorf("closeAllPositions: %v", closed)
	}
	if left := objects(t, g.ok(map[string]any{"operation": "getPositions", "market": "BTC"})["positions"]); len(left) != 0 {
		t.Errorf("positions left after closeAllPositions: %v", left)
	}
}
