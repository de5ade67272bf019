package standalone

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
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
	return startBinanceAt(t, cfg, nil)
}

// startBinanceAt is startBinance with one clock for the simulated Binance
// and the connector (nil: each its own), so prices stand still and every
// answer can be compared with the simulator's state.
func startBinanceAt(t *testing.T, cfg sim.Config, now func() time.Time, mutate ...func(*Config)) *binanceEnv {
	t.Helper()
	cfg.Keys = map[string]string{simMainKey: simMainSecret, simTestKey: simTestSecret}
	if now != nil {
		cfg.Now = now
	}
	s := sim.New(cfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	g := startGateway(t, func(c *Config) {
		c.Binance.MainnetURL, c.Binance.TestnetURL = srv.URL, srv.URL
		if now != nil {
			c.Binance.Now = now
		}
		for _, m := range mutate {
			m(c)
		}
	})
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

// market is the simulator's own state of a symbol.
func (b *binanceEnv) market(sym string) paper.MarketInfo {
	b.t.Helper()
	m, err := b.sim.Engine().Market(sym)
	if err != nil {
		b.t.Fatal(err)
	}
	return m
}

// binanceID is the order id the simulator shows Binance clients for a
// paper order id.
func binanceID(paperID string) string {
	return decimal.RequireFromString(paperID).Add(decimal.NewFromInt(3_961_340_000)).String()
}

// want compares answer fields with expected strings (decimals and ids) or
// numbers, field by field.
func want(t *testing.T, where string, got map[string]any, fields map[string]any) {
	t.Helper()
	for k, w := range fields {
		switch w := w.(type) {
		case decimal.Decimal:
			if g, ok := got[k].(string); !ok || g != w.String() {
				t.Errorf("%s.%s = %#v, want %q", where, k, got[k], w.String())
			}
		case int64:
			if g, ok := got[k].(float64); !ok || int64(g) != w {
				t.Errorf("%s.%s = %#v, want %d", where, k, got[k], w)
			}
		default:
			if got[k] != w {
				t.Errorf("%s.%s = %#v, want %#v", where, k, got[k], w)
			}
		}
	}
}

// TestBinanceAllOperations runs allOperations on Binance: stops and
// protection legs are algo orders (ids algo-…).
func TestBinanceAllOperations(t *testing.T) {
	clock := testenv.NewClock(time.Now().Truncate(time.Second))
	b := startBinanceAt(t, sim.Config{}, clock.Now)
	allOperations(t, binanceLike{x: contract.Binance, b: b, eng: b.sim.Engine(), acct: simMainKey, clock: clock, hits: b.sim.Hits,
		stopPrefix: "algo-", stopPost: "/fapi/v1/algoOrder", stopPosts: 3, openInterest: true})
}

// binanceLike is a row of the venues with Binance USDⓈ-M's API shapes
// (Binance, Aster) that allOperations drives.
type binanceLike struct {
	x            contract.Exchange
	b            *binanceEnv
	eng          *paper.Engine // the simulator's
	acct         string        // the main credential's account in eng
	clock        *testenv.Clock
	hits         func(method, path string) int
	stopPrefix   string // of stop order ids: "algo-" on Binance
	stopPost     string // the request stops and protection legs go out as
	stopPosts    int    // how many of stopPost the test sends up to the protection legs
	openInterest bool   // the venue publishes open interest
}

// allOperations drives the 20 operations through the HTTP edge, NATS and
// the venue's connector to its simulator over HTTP. Simulator and
// connector share a clock that stands still, so every SPEC §4 field is
// compared with what the simulator holds; markets are canonical.
func allOperations(t *testing.T, v binanceLike) {
	b, eng, acctKey := v.b, v.eng, v.acct
	market := func(sym string) paper.MarketInfo {
		t.Helper()
		m, err := eng.Market(sym)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// Walk the prices until mark and index differ, so a swap shows.
	for i := 0; i < 60 && market("BTCUSDT").MarkPrice.Equal(market("BTCUSDT").IndexPrice); i++ {
		v.clock.Set(v.clock.Now().Add(time.Second))
	}
	frozen := v.clock.Now()
	const btc = "BTC-USDT-PERP"
	d := decimal.RequireFromString

	// Market data.
	book := b.ok(map[string]any{"operation": "getOrderbook", "market": "BTC", "depth": 5})
	checkLevels(t, "bids", book["bids"], 5)
	checkLevels(t, "asks", book["asks"], 5)
	wantBook, _ := eng.Orderbook("BTCUSDT", 7)
	sameLevels := func(side string, got any, levels []paper.Level) {
		t.Helper()
		for i, l := range got.([]any) {
			pair := l.([]any)
			if pair[0] != levels[i].Price.String() || pair[1] != levels[i].Size.String() {
				t.Errorf("%s[%d] = %v, the venue holds [%s %s]", side, i, pair, levels[i].Price, levels[i].Size)
			}
		}
	}
	sameLevels("bids", book["bids"], wantBook.Bids)
	sameLevels("asks", book["asks"], wantBook.Asks)
	book7 := b.ok(map[string]any{"operation": "getOrderbook", "market": "BTCUSDT", "depth": 7})
	checkLevels(t, "bids", book7["bids"], 7) // the next book size is 10, cut to 7
	sameLevels("bids", book7["bids"], wantBook.Bids)

	btcInfo := market("BTCUSDT")
	mark := b.ok(map[string]any{"operation": "getMarkPrice", "market": "BTCUSDT"})
	requireFields(t, "getMarkPrice", mark, map[string]kind{"markPrice": decStr, "indexPrice": decStr})
	want(t, "getMarkPrice", mark, map[string]any{"markPrice": btcInfo.MarkPrice, "indexPrice": btcInfo.IndexPrice})
	markPx := btcInfo.MarkPrice

	cs := objects(t, b.ok(map[string]any{"operation": "getCandles", "market": btc, "interval": "15", "limit": 10})["candles"])
	wantCandles, _ := eng.Candles("BTCUSDT", 15, 10)
	if len(cs) != 10 || len(wantCandles) != 10 {
		t.Fatalf("want 10 candles, got %d", len(cs))
	}
	for i, c := range cs {
		requireFields(t, "candle", c, map[string]kind{"time": unixSec, "open": decStr, "high": decStr, "low": decStr, "close": decStr, "volume": decStr})
		w := wantCandles[i] // oldest first, as the venue answers
		want(t, "candle", c, map[string]any{"time": w.Time.Unix(), "open": w.Open, "high": w.High, "low": w.Low, "close": w.Close, "volume": w.Volume})
	}

	funding := b.ok(map[string]any{"operation": "getFundingRate", "market": "BTC/USDT:USDT"})
	requireFields(t, "getFundingRate", funding, map[string]kind{"fundingRate": decStr, "nextFundingTime": unixSec})
	want(t, "getFundingRate", funding, map[string]any{"fundingRate": btcInfo.FundingRate, "nextFundingTime": btcInfo.NextFundingTime.Unix()})

	entries := objects(t, b.ok(map[string]any{"operation": "getMarketsWithFunding"})["markets"])
	canonical := map[string]string{"BTCUSDT": btc, "ETHUSDT": "ETH-USDT-PERP", "1000PEPEUSDT": "1000PEPE-USDT-PERP"}
	if len(entries) != len(canonical) {
		t.Errorf("getMarketsWithFunding: %v", entries)
	}
	for native, canon := range canonical {
		info := market(native)
		found := false
		for _, m := range entries {
			requireFields(t, "market entry", m, map[string]kind{"symbol": str, "markPrice": decStr, "fundingRate": decStr})
			if _, has := m["openInterest"]; has != v.openInterest {
				t.Errorf("market entry %v: openInterest present %v, want %v (never 0 for a figure the venue does not give)", m, has, v.openInterest)
			}
			if m["symbol"] == canon {
				found = true
				want(t, canon, m, map[string]any{"markPrice": info.MarkPrice, "fundingRate": info.FundingRate})
				if v.openInterest {
					want(t, canon, m, map[string]any{"openInterest": info.OpenInterest})
				}
			}
		}
		if !found {
			t.Errorf("getMarketsWithFunding lacks %s: %v", canon, entries)
		}
	}

	fees := b.ok(map[string]any{"operation": "getFeeInfo", "market": "BTC"})
	want(t, "getFeeInfo", fees, map[string]any{"makerFee": eng.Fees().MakerBps, "takerFee": eng.Fees().TakerBps}) // 2 and 5 bps

	// Account.
	bal := b.ok(map[string]any{"operation": "getBalance"})
	requireFields(t, "getBalance", bal, map[string]kind{"exchange_type": str, "equity": decStr, "freeCollateral": decStr, "accountValue": decStr})
	acct, _ := eng.Balance(acctKey)
	want(t, "getBalance", bal, map[string]any{"exchange_type": string(v.x), "equity": acct.Equity, "freeCollateral": acct.FreeCollateral, "accountValue": acct.Wallet})
	if acct.Equity.String() != "10000" {
		t.Errorf("starting equity %s", acct.Equity)
	}

	if tc := b.ok(map[string]any{"operation": "testCredentials"}); tc["valid"] != true || tc["exchange"] != string(v.x) {
		t.Errorf("testCredentials: %v", tc)
	}

	lev := b.ok(map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 5})
	if n, _ := eng.Leverage(acctKey, "BTCUSDT"); lev["leverage"] != float64(5) || n != 5 {
		t.Errorf("setLeverage: answered %v, the venue holds %d", lev, n)
	}

	// Placement and listing.
	farBelow := markPx.Mul(d("0.8")).Round(0)
	limit := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.010", "price": farBelow.String(), "clientOrderId": "lim-1"})
	requireFields(t, "placeLimitOrder", limit, map[string]kind{"orderId": str, "market": str, "side": str, "size": decStr, "price": decStr, "status": str})
	want(t, "placeLimitOrder", limit, map[string]any{"market": btc, "side": "BUY", "size": d("0.01"), "price": farBelow, "status": "OPEN", "clientOrderId": "lim-1"})
	held, err := eng.OrderByClientID(acctKey, "lim-1")
	if err != nil || binanceID(held.ID) != limit["orderId"] || !held.Size.Equal(d("0.01")) || !held.Price.Equal(farBelow) {
		t.Errorf("the venue holds %+v (%v) for %v", held, err, limit)
	}

	orders := objects(t, b.ok(map[string]any{"operation": "getOrders", "market": "BTC"})["orders"])
	if len(orders) != 1 {
		t.Fatalf("getOrders: %v", orders)
	}
	requireFields(t, "order", orders[0], map[string]kind{"id": str, "market": str, "side": str, "type": str, "size": decStr,
		"price": decStr, "filledSize": decStr, "status": str, "createdAt": unixSec})
	want(t, "order", orders[0], map[string]any{"id": limit["orderId"], "market": btc, "side": "BUY", "type": "LIMIT", "size": d("0.01"),
		"price": farBelow, "filledSize": d("0"), "status": "OPEN", "createdAt": held.CreatedAt.Unix(), "clientOrderId": "lim-1"})

	mkt := b.ok(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.1"})
	requireFields(t, "placeMarketOrder", mkt, map[string]kind{"orderId": str, "filledPrice": decStr, "filledSize": decStr, "fee": decStr})
	size, notional, fee := decimal.Zero, decimal.Zero, decimal.Zero
	allFills, _ := eng.Fills(acctKey, "BTCUSDT", 100)
	for _, f := range allFills {
		if binanceID(f.OrderID) == mkt["orderId"] {
			size, notional, fee = size.Add(f.Size), notional.Add(f.Size.Mul(f.Price)), fee.Add(f.Fee)
		}
	}
	want(t, "placeMarketOrder", mkt, map[string]any{"market": btc, "side": "BUY", "filledSize": d("0.1"),
		"filledPrice": notional.DivRound(size, 8), "fee": fee})
	if !size.Equal(d("0.1")) || !fee.IsPositive() {
		t.Errorf("the venue filled %s with fee %s", size, fee)
	}

	positions := objects(t, b.ok(map[string]any{"operation": "getPositions"})["positions"])
	if len(positions) != 1 {
		t.Fatalf("getPositions: %v", positions)
	}
	requireFields(t, "position", positions[0], map[string]kind{"market": str, "side": str, "size": decStr, "entryPrice": decStr,
		"markPrice": decStr, "unrealizedPnl": decStr, "leverage": decStr})
	ps, _ := eng.Positions(acctKey, "BTCUSDT")
	want(t, "position", positions[0], map[string]any{"market": btc, "side": "LONG", "size": d("0.1"), "entryPrice": ps[0].EntryPrice,
		"markPrice": ps[0].MarkPrice, "unrealizedPnl": ps[0].UnrealizedPnL, "leverage": "5"})

	fills := objects(t, b.ok(map[string]any{"operation": "getFills", "market": "BTC"})["fills"])
	if len(fills) != len(allFills) || len(fills) == 0 {
		t.Fatalf("getFills: %d fills, the venue holds %d", len(fills), len(allFills))
	}
	for i, f := range fills {
		requireFields(t, "fill", f, map[string]kind{"id": str, "market": str, "side": str, "size": decStr, "price": decStr, "fee": decStr, "timestamp": unixSec})
		w := allFills[i] // newest first
		want(t, "fill", f, map[string]any{"id": w.ID, "orderId": binanceID(w.OrderID), "market": btc, "side": "BUY", "size": w.Size,
			"price": w.Price, "fee": w.Fee, "timestamp": w.Time.Unix()})
	}

	trigger := markPx.Mul(d("0.9")).Round(0)
	stop := b.ok(map[string]any{"operation": "placeStopOrder", "market": "BTC", "side": "SELL", "size": "0.1", "triggerPrice": trigger.String(), "clientOrderId": "stop-1"})
	requireFields(t, "placeStopOrder", stop, map[string]kind{"orderId": str, "status": str, "triggerPrice": decStr})
	want(t, "placeStopOrder", stop, map[string]any{"status": "PENDING", "triggerPrice": trigger})
	if id := stop["orderId"].(string); !strings.HasPrefix(id, v.stopPrefix) || strings.TrimPrefix(id, v.stopPrefix) == "" {
		t.Errorf("stop order id %v", stop["orderId"])
	}

	entry := ps[0].EntryPrice
	prot := b.ok(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.1",
		"entryPrice": entry.String(), "tpPercent": 5, "slPercent": "2.5", "clientOrderId": "prot-1"})
	requireFields(t, "placeProtectionOrders", prot, map[string]kind{"tpOrderId": str, "slOrderId": str})
	if n := v.hits("POST", v.stopPost); n != v.stopPosts {
		t.Errorf("stop and protection orders: want %d POST %s, got %d", v.stopPosts, v.stopPost, n)
	}
	tick := d("0.1")
	tp := entry.Mul(d("1.05")).Div(tick).Round(0).Mul(tick)
	sl := entry.Mul(d("0.975")).Div(tick).Round(0).Mul(tick)

	batch := b.ok(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
		{"market": "BTC", "side": "BUY", "size": "0.01", "price": farBelow.String(), "orderType": "LIMIT"},
		{"market": "1000PEPE", "side": "SELL", "size": "1000", "price": "0.02"},
	}})
	results := objects(t, batch["results"])
	if len(results) != 2 {
		t.Fatalf("placeBatchOrder: %v", batch)
	}
	for i, r := range results {
		requireFields(t, "batch result", r, map[string]kind{"orderId": str, "status": str})
		want(t, "batch result", r, map[string]any{"status": "OPEN"})
		if _, err := eng.Order(acctKey, decimal.RequireFromString(r["orderId"].(string)).Sub(decimal.NewFromInt(3_961_340_000)).String()); err != nil {
			t.Errorf("batch result %d: the venue has no order %v", i, r["orderId"])
		}
	}

	// Management.
	if cancel := b.ok(map[string]any{"operation": "cancelOrder", "orderId": limit["orderId"], "market": "BTC"}); len(cancel) != 1 {
		t.Errorf("cancelOrder answers success only, got %v", cancel)
	}
	if o, _ := eng.Order(acctKey, held.ID); o.Status != paper.Cancelled {
		t.Errorf("the venue still holds the cancelled order as %s", o.Status)
	}
	open := objects(t, b.ok(map[string]any{"operation": "getOrders"})["orders"])
	if len(open) != 5 { // batch 2 + stop + take-profit + stop-loss
		t.Fatalf("want 5 open orders, got %d: %v", len(open), open)
	}
	byID := map[any]map[string]any{}
	for _, o := range open {
		requireFields(t, "order", o, map[string]kind{"id": str, "market": str, "side": str, "type": str, "size": decStr,
			"price": decStr, "filledSize": decStr, "status": str, "createdAt": unixSec})
		byID[o["id"]] = o
	}
	for _, w := range []struct {
		id, typ, client string
		trigger         decimal.Decimal
	}{
		{stop["orderId"].(string), "STOP_MARKET", "stop-1", trigger},
		{prot["tpOrderId"].(string), "TAKE_PROFIT_MARKET", "prot-1-tp", tp},
		{prot["slOrderId"].(string), "STOP_MARKET", "prot-1-sl", sl},
	} {
		o := byID[w.id]
		if o == nil {
			t.Errorf("getOrders lacks algo order %s", w.id)
			continue
		}
		want(t, "algo order "+w.typ, o, map[string]any{"market": btc, "side": "SELL", "type": w.typ, "size": d("0.1"), "price": w.trigger,
			"triggerPrice": w.trigger, "filledSize": d("0"), "status": "PENDING", "createdAt": frozen.Unix(), "clientOrderId": w.client})
	}
	want(t, "batch order", byID[results[1]["orderId"]], map[string]any{"market": "1000PEPE-USDT-PERP", "side": "SELL", "type": "LIMIT",
		"size": d("1000"), "price": d("0.02"), "status": "OPEN"})
	if r := b.ok(map[string]any{"operation": "cancelOrder", "orderId": prot["tpOrderId"]}); r["success"] != true {
		t.Errorf("cancel algo order without market: %v", r)
	}

	cancelled := b.ok(map[string]any{"operation": "cancelAllOrders", "market": "BTC"})
	requireFields(t, "cancelAllOrders", cancelled, map[string]kind{"cancelledCount": integer})
	// The stop-loss is gone already when the protection watcher saw its
	// take-profit's cancel on the account feed first (the pair rule).
	if n := cancelled["cancelledCount"]; n != float64(3) && n != float64(2) {
		t.Errorf("cancelAllOrders on BTC: want 3 (batch BTC leg, stop, stop-loss), or 2 once the watcher cancelled the stop-loss, got %v", n)
	}
	if left, _ := eng.OpenOrders(acctKey, "BTCUSDT"); len(left) != 0 {
		t.Errorf("the venue still holds BTC orders after cancelAllOrders: %+v", left)
	}
	if left, _ := eng.OpenOrders(acctKey, "1000PEPEUSDT"); len(left) != 1 {
		t.Errorf("cancelAllOrders on BTC touched 1000PEPE: %+v", left)
	}

	before, _ := eng.Fills(acctKey, "BTCUSDT", 100)
	closed := b.ok(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
	requireFields(t, "closeAllPositions", closed, map[string]kind{"closedSize": decStr, "avgClosePrice": decStr})
	after, _ := eng.Fills(acctKey, "BTCUSDT", 100)
	size, notional = decimal.Zero, decimal.Zero
	for _, f := range after[:len(after)-len(before)] {
		size, notional = size.Add(f.Size), notional.Add(f.Size.Mul(f.Price))
	}
	want(t, "closeAllPositions", closed, map[string]any{"closedSize": d("0.1"), "avgClosePrice": notional.DivRound(size, 8)})
	if left, _ := eng.Positions(acctKey, "BTCUSDT"); len(left) != 0 {
		t.Errorf("the venue still holds a position after closeAllPositions: %+v", left)
	}

	// The testnet credential, through a test key, reaches its own account.
	tb := b.call(b.Bootstrap().APIKey, map[string]any{"operation": "getBalance", "credentialId": b.testCred})
	if tb.status != http.StatusOK || tb.body["equity"] != "10000" || tb.body["exchange_type"] != string(v.x) {
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
				found := false
				for _, o := range objects(t, b.ok(map[string]any{"operation": "getOrders", "market": tt.market})["orders"]) {
					if o["id"] == r["orderId"] {
						found = true
						if o["size"] != tt.wantSize || o["price"] != tt.wantPrice {
							t.Errorf("Binance holds %v, want size %s price %s", o, tt.wantSize, tt.wantPrice)
						}
					}
				}
				if !found {
					t.Errorf("order %v not listed by getOrders", r["orderId"])
				}
			})
		}
	})

	t.Run("min notional rejected before any upstream call", func(t *testing.T) {
		before := b.orderHits() // orders only: the account feed may read meanwhile
		r := b.fails(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.001", "price": "50000"},
			http.StatusBadRequest, contract.CodeInvalidRequest, "")
		if !contains(r.body["error"].(string), "minimum notional 100") {
			t.Errorf("message: %s", r.raw)
		}
		if n := b.orderHits() - before; n != 0 {
			t.Errorf("%d requests reached Binance", n)
		}
	})

	t.Run("reduce-only under the minimum notional goes to Binance", func(t *testing.T) {
		// Binance exempts reduce-only orders (-4164: "unless you choose reduce only"),
		// so a small remainder can be closed with a limit order.
		b.ok(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.002"})
		price := mark.Add(decimal.NewFromInt(1000)).Round(0)
		if value := price.Mul(decimal.RequireFromString("0.001")); !value.LessThan(decimal.NewFromInt(100)) {
			t.Fatalf("order value %s is not under BTCUSDT's minimum notional 100", value)
		}
		r := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "SELL", "size": "0.001", "price": price.String(), "reduceOnly": true})
		if r["status"] != "OPEN" || r["size"] != "0.001" {
			t.Errorf("placed %v", r)
		}
		b.ok(map[string]any{"operation": "cancelAllOrders", "market": "BTC"})
		b.ok(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
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

	t.Run("protection clientOrderId leaves room for -tp and -sl", func(t *testing.T) {
		before := b.orderHits() // orders only: the account feed may read meanwhile
		e := b.fails(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.01",
			"entryPrice": "90000", "tpPercent": 5, "clientOrderId": strings.Repeat("p", 34)}, http.StatusBadRequest, contract.CodeInvalidRequest, "")
		if !contains(e.body["error"].(string), "at most 33 characters") {
			t.Errorf("message: %s", e.raw)
		}
		if n := b.orderHits() - before; n != 0 {
			t.Errorf("%d requests reached Binance", n)
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

// TestBinanceMultiplierListing: 1000PEPEUSDT is reached by every form of
// the multiplier listing and answers with its canonical name; plain PEPE
// is not that market (its sizes would be off by a factor of 1000).
func TestBinanceMultiplierListing(t *testing.T) {
	b := startBinance(t, sim.Config{})
	for _, form := range []string{"1000PEPE", "kPEPE", "kPEPE-USD-PERP", "1000PEPE-USDT-PERP", "1000PEPEUSDT", "1000PEPE/USDT:USDT"} {
		if r := b.ok(map[string]any{"operation": "getMarkPrice", "market": form}); r["markPrice"] == nil {
			t.Errorf("%s: %v", form, r)
		}
	}
	r := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "kPEPE", "side": "BUY", "size": "1000", "price": "0.01"})
	if r["market"] != "1000PEPE-USDT-PERP" || r["size"] != "1000" {
		t.Errorf("placed %v", r)
	}
	o, err := b.sim.Engine().OrderByClientID(simMainKey, r["clientOrderId"].(string))
	if err != nil || o.Market != "1000PEPEUSDT" || o.Size.String() != "1000" {
		t.Errorf("Binance holds %+v, %v", o, err)
	}
	for _, form := range []string{"PEPE", "PEPE-USDT-PERP"} {
		b.fails(map[string]any{"operation": "getMarkPrice", "market": form}, http.StatusBadRequest, contract.CodeUnknownMarket, "")
	}
}

// TestBinanceHedgeModeRefused: an account in hedge position mode gets a
// clear INVALID_REQUEST on order operations and nothing is sent; reads
// still work.
func TestBinanceHedgeModeRefused(t *testing.T) {
	b := startBinance(t, sim.Config{})
	b.sim.SetHedgeMode(simMainKey, true)
	for _, body := range []map[string]any{
		{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000"},
		{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"},
		{"operation": "placeStopOrder", "market": "BTC", "side": "SELL", "size": "0.01", "triggerPrice": "50000"},
		{"operation": "placeBatchOrder", "orders": []map[string]any{{"market": "BTC", "side": "BUY", "size": "0.01", "price": "50000"}}},
		{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.01", "entryPrice": "90000", "tpPercent": 5},
		{"operation": "closeAllPositions", "market": "BTC"},
	} {
		r := b.fails(body, http.StatusBadRequest, contract.CodeInvalidRequest, "")
		if !contains(r.body["error"].(string), "hedge position mode") || !contains(r.body["error"].(string), "One-way") {
			t.Errorf("%v: %s", body["operation"], r.raw)
		}
	}
	for _, path := range []string{"/fapi/v1/order", "/fapi/v1/batchOrders", "/fapi/v1/algoOrder"} {
		if n := b.sim.Hits("POST", path); n != 0 {
			t.Errorf("%d requests to POST %s in hedge mode", n, path)
		}
	}
	b.ok(map[string]any{"operation": "getPositions"})
	b.ok(map[string]any{"operation": "getBalance"})
}

// TestBinanceErrorReasons: each Binance failure reaches the client as
// EXCHANGE_ERROR with its reason and Binance's own code.
func TestBinanceErrorReasons(t *testing.T) {
	b := startBinance(t, sim.Config{})
	mark := dec(t, b.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"])
	wrong := b.newCredential(b.Bootstrap().AccountID, contract.Binance, contract.Mainnet, `{"apiKey":"`+simMainKey+`","apiSecret":"wrong-secret"}`)

	wantRejected(t, b.ok(map[string]any{"operation": "testCredentials", "credentialId": wrong}), contract.Binance, "wrong-secret")

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
