package standalone

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// binanceEnv is a gateway whose Binance connector talks to a simulator,
// with a mainnet credential used through a live key and a testnet one
// through a test key.
type binanceEnv struct {
	*testGateway
	sim      *sim.Server
	live     string // mt_live_ key
	mainCred string
	testCred string
}

const (
	simMainKey    = "binance-main-key"
	simMainSecret = "binance-main-secret"
	simTestKey    = "binance-test-key"
	simTestSecret = "binance-test-secret"
)

func startBinance(t *testing.T, cfg sim.Config) *binanceEnv {
	t.Helper()
	cfg.Keys = map[string]string{simMainKey: simMainSecret, simTestKey: simTestSecret}
	s := sim.New(cfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	g := startGateway(t, func(c *Config) { c.Binance.MainnetURL, c.Binance.TestnetURL = srv.URL, srv.URL })
	acct := g.Bootstrap().AccountID
	return &binanceEnv{
		testGateway: g,
		sim:         s,
		live:        g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		mainCred:    g.newCredential(acct, contract.Binance, contract.Mainnet, `{"apiKey":"`+simMainKey+`","apiSecret":"`+simMainSecret+`"}`),
		testCred:    g.newCredential(acct, contract.Binance, contract.Testnet, `{"apiKey":"`+simTestKey+`","apiSecret":"`+simTestSecret+`"}`),
	}
}

// do calls with the live key and the mainnet credential unless body names another.
func (b *binanceEnv) do(body map[string]any) response {
	b.t.Helper()
	if _, ok := body["credentialId"]; !ok {
		body["credentialId"] = b.mainCred
	}
	return b.call(b.live, body)
}

func (b *binanceEnv) ok(body map[string]any) map[string]any {
	b.t.Helper()
	r := b.do(body)
	if r.status != http.StatusOK || r.body["success"] != true {
		b.t.Fatalf("%v: status %d body %s", body["operation"], r.status, r.raw)
	}
	return r.body
}

// fails checks an error answer's status, code and (for EXCHANGE_ERROR) reason.
func (b *binanceEnv) fails(body map[string]any, status int, code contract.Code, reason contract.Reason) response {
	b.t.Helper()
	r := b.do(body)
	if r.status != status || r.code() != string(code) || (reason != "" && r.body["reason"] != string(reason)) {
		b.t.Fatalf("%v: want %d %s %s, got %d %s", body["operation"], status, code, reason, r.status, r.raw)
	}
	return r
}

// TestBinanceAllOperations drives the 20 operations through the HTTP edge,
// NATS and the Binance connector to the simulator, checking every SPEC §4
// field and canonical markets.
func TestBinanceAllOperations(t *testing.T) {
	b := startBinance(t, sim.Config{})
	const btc = "BTC-USDT-PERP"

	book := b.ok(map[string]any{"operation": "getOrderbook", "market": "BTC", "depth": 5})
	checkLevels(t, "bids", book["bids"], 5)
	checkLevels(t, "asks", book["asks"], 5)
	if !dec(t, book["bids"].([]any)[0].([]any)[0]).LessThan(dec(t, book["asks"].([]any)[0].([]any)[0])) {
		t.Errorf("crossed book: %v", book)
	}
	if d := b.ok(map[string]any{"operation": "getOrderbook", "market": "BTCUSDT", "depth": 7}); len(d["bids"].([]any)) != 7 {
		t.Errorf("depth 7 (Binance's next size is 10): got %d levels", len(d["bids"].([]any)))
	}

	mark := b.ok(map[string]any{"operation": "getMarkPrice", "market": "BTCUSDT"})
	requireFields(t, "getMarkPrice", mark, map[string]kind{"markPrice": decStr, "indexPrice": decStr})
	markPx := dec(t, mark["markPrice"])

	cs := objects(t, b.ok(map[string]any{"operation": "getCandles", "market": btc, "interval": "15", "limit": 10})["candles"])
	if len(cs) != 10 {
		t.Fatalf("want 10 candles, got %d", len(cs))
	}
	for i, c := range cs {
		requireFields(t, "candle", c, map[string]kind{"time": unixSec, "open": decStr, "high": decStr, "low": decStr, "close": decStr, "volume": decStr})
		if int64(c["time"].(float64))%900 != 0 || (i > 0 && c["time"].(float64) <= cs[i-1]["time"].(float64)) {
			t.Errorf("candle %d: not 15-minute aligned oldest first: %v", i, c)
		}
	}

	funding := b.ok(map[string]any{"operation": "getFundingRate", "market": "BTC/USDT:USDT"})
	requireFields(t, "getFundingRate", funding, map[string]kind{"fundingRate": decStr, "nextFundingTime": unixSec})
	if int64(funding["nextFundingTime"].(float64)) <= time.Now().Unix() {
		t.Errorf("nextFundingTime %v is not in the future", funding["nextFundingTime"])
	}

	seen := map[string]bool{}
	for _, m := range objects(t, b.ok(map[string]any{"operation": "getMarketsWithFunding"})["markets"]) {
		requireFields(t, "market entry", m, map[string]kind{"symbol": str, "markPrice": decStr, "fundingRate": decStr, "openInterest": decStr})
		seen[m["symbol"].(string)] = true
	}
	if len(seen) != 3 || !seen[btc] || !seen["ETH-USDT-PERP"] || !seen["1000PEPE-USDT-PERP"] {
		t.Errorf("getMarketsWithFunding symbols: %v", seen)
	}

	fees := b.ok(map[string]any{"operation": "getFeeInfo", "market": "BTC"})
	if fees["makerFee"] != "2" || fees["takerFee"] != "5" {
		t.Errorf("getFeeInfo in bps: %v", fees)
	}

	bal := b.ok(map[string]any{"operation": "getBalance"})
	requireFields(t, "getBalance", bal, map[string]kind{"exchange_type": str, "equity": decStr, "freeCollateral": decStr, "accountValue": decStr})
	if bal["exchange_type"] != "binance" || bal["equity"] != "10000" || bal["accountValue"] != "10000" {
		t.Errorf("getBalance: %v", bal)
	}

	if tc := b.ok(map[string]any{"operation": "testCredentials"}); tc["valid"] != true || tc["exchange"] != "binance" {
		t.Errorf("testCredentials: %v", tc)
	}

	if lev := b.ok(map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 5}); lev["leverage"] != float64(5) {
		t.Errorf("setLeverage: %v", lev)
	}

	farBelow := markPx.Mul(decimal.RequireFromString("0.8")).Round(0).String()
	limit := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.010", "price": farBelow})
	requireFields(t, "placeLimitOrder", limit, map[string]kind{"orderId": str, "market": str, "side": str, "size": decStr, "price": decStr, "status": str})
	if limit["market"] != btc || limit["side"] != "BUY" || limit["size"] != "0.01" || limit["price"] != farBelow || limit["status"] != "OPEN" {
		t.Errorf("placeLimitOrder: %v", limit)
	}

	orders := objects(t, b.ok(map[string]any{"operation": "getOrders", "market": "BTC"})["orders"])
	if len(orders) != 1 || orders[0]["id"] != limit["orderId"] {
		t.Fatalf("getOrders: %v", orders)
	}
	requireFields(t, "order", orders[0], map[string]kind{"id": str, "market": str, "side": str, "type": str, "size": decStr,
		"price": decStr, "filledSize": decStr, "status": str, "createdAt": unixSec})
	if orders[0]["status"] != "OPEN" || orders[0]["type"] != "LIMIT" || orders[0]["market"] != btc || orders[0]["filledSize"] != "0" {
		t.Errorf("order: %v", orders[0])
	}

	mkt := b.ok(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.1"})
	requireFields(t, "placeMarketOrder", mkt, map[string]kind{"orderId": str, "filledPrice": decStr, "filledSize": decStr, "fee": decStr})
	fillPx := dec(t, mkt["filledPrice"])
	wantFee := fillPx.Mul(decimal.RequireFromString("0.1")).Mul(decimal.RequireFromString("0.0005"))
	if mkt["filledSize"] != "0.1" || !dec(t, mkt["fee"]).Sub(wantFee).Abs().LessThan(decimal.RequireFromString("0.0001")) {
		t.Errorf("placeMarketOrder: %v (fee want about %s, taker 5 bps)", mkt, wantFee)
	}
	if b.sim.Hits("GET", "/fapi/v1/userTrades") != 1 {
		t.Errorf("the fee was not read back from userTrades")
	}

	positions := objects(t, b.ok(map[string]any{"operation": "getPositions"})["positions"])
	if len(positions) != 1 {
		t.Fatalf("getPositions: %v", positions)
	}
	requireFields(t, "position", positions[0], map[string]kind{"market": str, "side": str, "size": decStr, "entryPrice": decStr,
		"markPrice": decStr, "unrealizedPnl": decStr, "leverage": decStr})
	if positions[0]["side"] != "LONG" || positions[0]["size"] != "0.1" || positions[0]["leverage"] != "5" || positions[0]["market"] != btc {
		t.Errorf("position: %v", positions[0])
	}

	fills := objects(t, b.ok(map[string]any{"operation": "getFills", "market": "BTC"})["fills"])
	if len(fills) == 0 {
		t.Fatal("getFills: no fills after a market order")
	}
	for i, f := range fills {
		requireFields(t, "fill", f, map[string]kind{"id": str, "market": str, "side": str, "size": decStr, "price": decStr, "fee": decStr, "timestamp": unixSec})
		if f["market"] != btc || f["side"] != "BUY" || (i > 0 && dec(t, f["id"]).GreaterThan(dec(t, fills[i-1]["id"]))) {
			t.Errorf("fill %d (newest first, canonical market): %v", i, f)
		}
	}

	trigger := markPx.Mul(decimal.RequireFromString("0.9")).Round(0).String()
	stop := b.ok(map[string]any{"operation": "placeStopOrder", "market": "BTC", "side": "SELL", "size": "0.1", "triggerPrice": trigger})
	requireFields(t, "placeStopOrder", stop, map[string]kind{"orderId": str, "status": str, "triggerPrice": decStr})
	if stop["status"] != "PENDING" || stop["triggerPrice"] != trigger || !strings.HasPrefix(stop["orderId"].(string), "algo-") {
		t.Errorf("placeStopOrder: %v", stop)
	}

	prot := b.ok(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.1",
		"entryPrice": positions[0]["entryPrice"], "tpPercent": 5, "slPercent": "2.5"})
	requireFields(t, "placeProtectionOrders", prot, map[string]kind{"tpOrderId": str, "slOrderId": str})
	if b.sim.Hits("POST", "/fapi/v1/algoOrder") != 3 {
		t.Errorf("stop and protection orders: want 3 algo orders, got %d", b.sim.Hits("POST", "/fapi/v1/algoOrder"))
	}

	batch := b.ok(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
		{"market": "BTC", "side": "BUY", "size": "0.01", "price": farBelow, "orderType": "LIMIT"},
		{"market": "1000PEPE", "side": "SELL", "size": "1000", "price": "0.02"},
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

	if cancel := b.ok(map[string]any{"operation": "cancelOrder", "orderId": limit["orderId"], "market": "BTC"}); len(cancel) != 1 {
		t.Errorf("cancelOrder answers success only, got %v", cancel)
	}
	open := objects(t, b.ok(map[string]any{"operation": "getOrders"})["orders"])
	if len(open) != 5 { // batch 2 + stop + take-profit + stop-loss
		t.Fatalf("want 5 open orders, got %d: %v", len(open), open)
	}
	markets := map[string]int{}
	for _, o := range open {
		requireFields(t, "order", o, map[string]kind{"id": str, "market": str, "side": str, "type": str, "size": decStr,
			"price": decStr, "filledSize": decStr, "status": str, "createdAt": unixSec})
		markets[o["market"].(string)]++
		if strings.HasPrefix(o["id"].(string), "algo-") && (o["status"] != "PENDING" || o["side"] != "SELL") {
			t.Errorf("algo order: %v", o)
		}
	}
	if markets[btc] != 4 || markets["1000PEPE-USDT-PERP"] != 1 {
		t.Errorf("open orders by market: %v", markets)
	}
	if r := b.ok(map[string]any{"operation": "cancelOrder", "orderId": prot["tpOrderId"]}); r["success"] != true {
		t.Errorf("cancel algo order without market: %v", r)
	}

	cancelled := b.ok(map[string]any{"operation": "cancelAllOrders", "market": "BTC"})
	requireFields(t, "cancelAllOrders", cancelled, map[string]kind{"cancelledCount": integer})
	if cancelled["cancelledCount"] != float64(3) {
		t.Errorf("cancelAllOrders on BTC: want 3 (batch BTC leg, stop, stop-loss), got %v", cancelled["cancelledCount"])
	}
	if left := objects(t, b.ok(map[string]any{"operation": "getOrders", "market": "BTC"})["orders"]); len(left) != 0 {
		t.Errorf("orders left after cancelAllOrders: %v", left)
	}

	closed := b.ok(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
	requireFields(t, "closeAllPositions", closed, map[string]kind{"closedSize": decStr, "avgClosePrice": decStr})
	if closed["closedSize"] != "0.1" || !dec(t, closed["avgClosePrice"]).IsPositive() {
		t.Errorf("closeAllPositions: %v", closed)
	}
	if left := objects(t, b.ok(map[string]any{"operation": "getPositions", "market": "BTC"})["positions"]); len(left) != 0 {
		t.Errorf("positions left after closeAllPositions: %v", left)
	}

	// The testnet credential, through a test key, reaches its own account.
	tb := b.call(b.Bootstrap().APIKey, map[string]any{"operation": "getBalance", "credentialId": b.testCred})
	if tb.status != http.StatusOK || tb.body["equity"] != "10000" || tb.body["exchange_type"] != "binance" {
		t.Errorf("testnet getBalance: %d %s", tb.status, tb.raw)
	}
	if r := b.do(map[string]any{"operation": "getBalance", "credentialId": b.testCred}); r.code() != string(contract.CodeEnvironmentMismatch) {
		t.Errorf("live key with testnet credential: %d %s", r.status, r.raw)
	}
}

// TestBinanceOrderRules: rounding, min notional before any upstream call,
// clientOrderId rules and idempotency, and a batch of 7.
func TestBinanceOrderRules(t *testing.T) {
	b := startBinance(t, sim.Config{})
	mark := dec(t, b.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"])

	t.Run("rounding", func(t *testing.T) {
		tests := []struct {
			name, market, side, size, price string
			wantSize, wantPrice             string
		}{
			{"buy rounds down", "BTC", "BUY", "0.0159", "50000.17", "0.015", "50000.1"},
			{"sell rounds price up", "BTC", "SELL", "0.0159", mark.Add(decimal.NewFromInt(20000)).Round(0).String() + ".11", "0.015",
				mark.Add(decimal.NewFromInt(20000)).Round(0).String() + ".2"},
			{"multiplier listing", "1000PEPE-USDT-PERP", "BUY", "1500.7", "0.01000009", "1500", "0.01"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := b.ok(map[string]any{"operation": "placeLimitOrder", "market": tt.market, "side": tt.side, "size": tt.size, "price": tt.price})
				if r["size"] != tt.wantSize || r["price"] != tt.wantPrice {
					t.Errorf("placed %v, want size %s price %s", r, tt.wantSize, tt.wantPrice)
				}
				for _, o := range objects(t, b.ok(map[string]any{"operation": "getOrders", "market": tt.market})["orders"]) {
					if o["id"] == r["orderId"] && (o["size"] != tt.wantSize || o["price"] != tt.wantPrice) {
						t.Errorf("Binance holds %v, want size %s price %s", o, tt.wantSize, tt.wantPrice)
					}
				}
			})
		}
	})

	t.Run("min notional rejected before any upstream call", func(t *testing.T) {
		before := b.sim.TotalHits()
		r := b.fails(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.001", "price": "50000"},
			http.StatusBadRequest, contract.CodeInvalidRequest, "")
		if !contains(r.body["error"].(string), "minimum notional 100") {
			t.Errorf("message: %s", r.raw)
		}
		if n := b.sim.TotalHits() - before; n != 0 {
			t.Errorf("%d requests reached Binance", n)
		}
	})

	t.Run("clientOrderId", func(t *testing.T) {
		r := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000", "clientOrderId": "bot-7_A"})
		found := false
		for _, o := range objects(t, b.ok(map[string]any{"operation": "getOrders", "market": "BTC"})["orders"]) {
			found = found || (o["id"] == r["orderId"] && o["clientOrderId"] == "bot-7_A")
		}
		if !found || r["clientOrderId"] != "bot-7_A" {
			t.Errorf("newClientOrderId not sent as given: %v", r)
		}
		before := b.sim.Hits("POST", "/fapi/v1/order")
		for _, bad := range []string{strings.Repeat("a", 37), "a.b", "a b"} {
			e := b.fails(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000", "clientOrderId": bad},
				http.StatusBadRequest, contract.CodeInvalidRequest, "")
			if !contains(e.body["error"].(string), "clientOrderId") {
				t.Errorf("%q: message does not name clientOrderId: %s", bad, e.raw)
			}
		}
		if b.sim.Hits("POST", "/fapi/v1/order") != before {
			t.Errorf("a rejected clientOrderId reached Binance")
		}
	})

	t.Run("repeated clientOrderId places once", func(t *testing.T) {
		before := b.sim.Hits("POST", "/fapi/v1/order")
		body := func() map[string]any {
			return map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "51000", "clientOrderId": "same-id-1"}
		}
		first, second := b.ok(body()), b.ok(body())
		if first["orderId"] != second["orderId"] {
			t.Errorf("repeat answered another order: %v vs %v", first, second)
		}
		if n := b.sim.Hits("POST", "/fapi/v1/order") - before; n != 1 {
			t.Errorf("want 1 order sent to Binance, got %d", n)
		}
	})

	t.Run("batch of 7 is two calls in request order", func(t *testing.T) {
		before := b.sim.Hits("POST", "/fapi/v1/batchOrders")
		var orders []map[string]any
		for i := range 7 {
			orders = append(orders, map[string]any{"market": "ETH", "side": "BUY", "size": "0.01", "price": decimal.NewFromInt(int64(2000 + i)).String()})
		}
		results := objects(t, b.ok(map[string]any{"operation": "placeBatchOrder", "orders": orders})["results"])
		if n := b.sim.Hits("POST", "/fapi/v1/batchOrders") - before; n != 2 {
			t.Errorf("want 2 upstream batch calls, got %d", n)
		}
		priceOf := map[any]any{}
		for _, o := range objects(t, b.ok(map[string]any{"operation": "getOrders", "market": "ETH"})["orders"]) {
			priceOf[o["id"]] = o["price"]
		}
		if len(results) != 7 {
			t.Fatalf("want 7 results, got %v", results)
		}
		for i, r := range results {
			if r["status"] != "OPEN" || priceOf[r["orderId"]] != decimal.NewFromInt(int64(2000+i)).String() {
				t.Errorf("result %d: %v (price %v)", i, r, priceOf[r["orderId"]])
			}
		}
	})
}

// TestBinanceErrorReasons: each Binance failure reaches the client as
// EXCHANGE_ERROR with its reason and Binance's own code.
func TestBinanceErrorReasons(t *testing.T) {
	b := startBinance(t, sim.Config{})
	mark := dec(t, b.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"])
	wrong := b.newCredential(b.Bootstrap().AccountID, contract.Binance, contract.Mainnet, `{"apiKey":"`+simMainKey+`","apiSecret":"wrong-secret"}`)

	if tc := b.ok(map[string]any{"operation": "testCredentials", "credentialId": wrong}); tc["valid"] != false || tc["exchange"] != "binance" {
		t.Errorf("testCredentials with a wrong secret: %v", tc)
	}

	tests := []struct {
		name   string
		inject func()
		body   map[string]any
		reason contract.Reason
		code   string
	}{
		{name: "insufficient margin", body: map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "50",
			"price": mark.Mul(decimal.RequireFromString("0.9")).Round(0).String()}, reason: contract.ReasonInsufficientMargin, code: "-2019"},
		{name: "post-only would take", body: map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
			"price": mark.Mul(decimal.RequireFromString("1.05")).Round(0).String(), "postOnly": true}, reason: contract.ReasonPostOnlyRejected, code: "-5022"},
		{name: "invalid order", body: map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "SELL", "size": "0.01", "reduceOnly": true},
			reason: contract.ReasonInvalidOrder, code: "-2022"},
		{name: "order not found", body: map[string]any{"operation": "cancelOrder", "orderId": "4061349999", "market": "BTC"},
			reason: contract.ReasonOrderNotFound, code: "-2011"},
		{name: "authentication failed", body: map[string]any{"operation": "getBalance", "credentialId": wrong},
			reason: contract.ReasonAuthenticationFailed, code: "-1022"},
		{name: "permission denied", inject: func() {
			b.sim.FailNext("POST", "/fapi/v1/leverage", sim.Failure{Status: 400, Code: -4202, Msg: "Adjust leverage is not allowed for this account."})
		}, body: map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 50}, reason: contract.ReasonPermissionDenied, code: "-4202"},
		{name: "upstream unavailable", inject: func() {
			b.sim.FailNext("GET", "/fapi/v1/depth", sim.Failure{Status: 503, Code: -1001, Msg: "Internal error; unable to process your request. Please try again."})
		}, body: map[string]any{"operation": "getOrderbook", "market": "BTC"}, reason: contract.ReasonUpstreamUnavailable, code: "-1001"},
		{name: "unknown", inject: func() {
			b.sim.FailNext("GET", "/fapi/v1/openOrders", sim.Failure{Status: 400, Code: -9999, Msg: "Something new."})
		}, body: map[string]any{"operation": "getOrders"}, reason: contract.ReasonUnknown, code: "-9999"},
		// Last: the connector then holds back requests to this host.
		{name: "upstream rate limited", inject: func() {
			b.sim.FailNext("GET", "/fapi/v1/premiumIndex", sim.Failure{Status: 429, Code: -1003, Msg: "Too many requests.", RetryAfter: 3})
		}, body: map[string]any{"operation": "getFundingRate", "market": "BTC"}, reason: contract.ReasonUpstreamRateLimited, code: "-1003"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.inject != nil {
				tt.inject()
			}
			r := b.fails(tt.body, http.StatusBadGateway, contract.CodeExchangeError, tt.reason)
			if r.body["exchangeCode"] != tt.code || r.body["exchangeMessage"] == nil {
				t.Errorf("exchangeCode %v, want %s: %s", r.body["exchangeCode"], tt.code, r.raw)
			}
			if tt.reason == contract.ReasonUpstreamRateLimited && r.body["retryAfter"] != float64(3) {
				t.Errorf("retryAfter: %s", r.raw)
			}
		})
	}
}

// TestBinanceClockSkew: Binance's clock is 30 s ahead of the gateway's, six
// times the receive window; signed calls still pass.
func TestBinanceClockSkew(t *testing.T) {
	b := startBinance(t, sim.Config{Now: func() time.Time { return time.Now().Add(30 * time.Second) }})
	if bal := b.ok(map[string]any{"operation": "getBalance"}); bal["equity"] != "10000" {
		t.Errorf("getBalance: %v", bal)
	}
	r := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "ETH", "side": "BUY", "size": "0.01", "price": "2000"})
	if r["status"] != "OPEN" {
		t.Errorf("placeLimitOrder: %v", r)
	}
	if b.sim.Hits("GET", "/fapi/v1/time") == 0 {
		t.Error("server time never asked")
	}
}
