package standalone

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

const (
	bybitKey    = "bybit-main-key"
	bybitSecret = "bybit-main-secret"
)

// bybitEnv is a gateway whose Bybit connector talks to a simulator over
// HTTP, with a mainnet credential used through a live key.
type bybitEnv struct {
	*binanceEnv // the same helpers: do, ok, fails
	sim         *bybitsim.Server
}

func startBybit(t *testing.T, cfg bybitsim.Config, now func() time.Time) *bybitEnv {
	t.Helper()
	cfg.Keys = map[string]string{bybitKey: bybitSecret}
	cfg.Now = now
	s := bybitsim.New(cfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	g := startGateway(t, func(c *Config) {
		c.Bybit.MainnetURL, c.Bybit.TestnetURL, c.Bybit.DemoURL = srv.URL, srv.URL, srv.URL
		c.Bybit.Now = now
	})
	acct := g.Bootstrap().AccountID
	return &bybitEnv{sim: s, binanceEnv: &binanceEnv{
		testGateway: g,
		live:        g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		mainCred:    g.newCredential(acct, contract.Bybit, contract.Mainnet, `{"apiKey":"`+bybitKey+`","apiSecret":"`+bybitSecret+`"}`),
	}}
}

func (b *bybitEnv) market(sym string) paper.MarketInfo {
	b.t.Helper()
	m, err := b.sim.Engine().Market(sym)
	if err != nil {
		b.t.Fatal(err)
	}
	return m
}

// TestBybitAllOperations drives the 20 operations through the HTTP edge,
// NATS and the Bybit connector to the simulator over HTTP, with a clock
// that stands still, and compares the SPEC §4 fields with what the
// simulated Bybit holds; markets are canonical BTC-USDT-PERP.
func TestBybitAllOperations(t *testing.T) {
	var mu sync.Mutex
	frozen := time.Now().Truncate(time.Second)
	b := startBybit(t, bybitsim.Config{}, func() time.Time { mu.Lock(); defer mu.Unlock(); return frozen })
	eng := b.sim.Engine()
	const btc = "BTC-USDT-PERP"
	d := decimal.RequireFromString

	book := b.ok(map[string]any{"operation": "getOrderbook", "market": "BTC", "depth": 5})
	checkLevels(t, "bids", book["bids"], 5)
	checkLevels(t, "asks", book["asks"], 5)
	wantBook, _ := eng.Orderbook("BTCUSDT", 5)
	for i, l := range book["bids"].([]any) {
		if p := l.([]any); p[0] != wantBook.Bids[i].Price.String() || p[1] != wantBook.Bids[i].Size.String() {
			t.Errorf("bids[%d] = %v, Bybit holds %v", i, p, wantBook.Bids[i])
		}
	}
	info := b.market("BTCUSDT")
	mark := b.ok(map[string]any{"operation": "getMarkPrice", "market": "BTCUSDT"})
	want(t, "getMarkPrice", mark, map[string]any{"markPrice": info.MarkPrice, "indexPrice": info.IndexPrice})

	cs := objects(t, b.ok(map[string]any{"operation": "getCandles", "market": btc, "interval": "1440", "limit": 5})["candles"])
	wantCandles, _ := eng.Candles("BTCUSDT", 1440, 5)
	if len(cs) != 5 {
		t.Fatalf("candles: %v", cs)
	}
	for i, c := range cs { // oldest first, though Bybit answers newest first
		w := wantCandles[i]
		want(t, "candle", c, map[string]any{"time": w.Time.Unix(), "open": w.Open, "high": w.High, "low": w.Low, "close": w.Close, "volume": w.Volume})
	}
	funding := b.ok(map[string]any{"operation": "getFundingRate", "market": "BTC/USDT:USDT"})
	want(t, "getFundingRate", funding, map[string]any{"fundingRate": info.FundingRate, "nextFundingTime": info.NextFundingTime.Unix()})
	entries := objects(t, b.ok(map[string]any{"operation": "getMarketsWithFunding"})["markets"])
	if len(entries) != 3 {
		t.Errorf("getMarketsWithFunding: %v", entries)
	}
	for _, e := range entries {
		requireFields(t, "market entry", e, map[string]kind{"symbol": str, "markPrice": decStr, "fundingRate": decStr, "openInterest": decStr})
	}
	fees := b.ok(map[string]any{"operation": "getFeeInfo", "market": "BTC"})
	want(t, "getFeeInfo", fees, map[string]any{"makerFee": eng.Fees().MakerBps, "takerFee": eng.Fees().TakerBps})

	bal := b.ok(map[string]any{"operation": "getBalance"})
	acct, _ := eng.Balance(bybitKey)
	want(t, "getBalance", bal, map[string]any{"exchange_type": "bybit", "equity": acct.Equity, "freeCollateral": acct.FreeCollateral, "accountValue": acct.Equity})
	if tc := b.ok(map[string]any{"operation": "testCredentials"}); tc["valid"] != true || tc["exchange"] != "bybit" {
		t.Errorf("testCredentials: %v", tc)
	}
	lev := b.ok(map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 5})
	if n, _ := eng.Leverage(bybitKey, "BTCUSDT"); lev["leverage"] != float64(5) || n != 5 {
		t.Errorf("setLeverage: answered %v, Bybit holds %d", lev, n)
	}

	farBelow := info.MarkPrice.Mul(d("0.8")).Round(0)
	limit := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.010", "price": farBelow.String(), "clientOrderId": "lim-1"})
	want(t, "placeLimitOrder", limit, map[string]any{"market": btc, "side": "BUY", "size": d("0.01"), "price": farBelow, "status": "OPEN", "clientOrderId": "lim-1"})
	held, err := eng.OrderByClientID(bybitKey, "lim-1")
	if err != nil || !held.Price.Equal(farBelow) || !held.Size.Equal(d("0.01")) {
		t.Fatalf("Bybit holds %+v (%v)", held, err)
	}
	post := b.fails(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
		"price": info.MarkPrice.Mul(d("1.02")).Round(0).String(), "postOnly": true, "clientOrderId": "po-1"}, http.StatusBadGateway, contract.CodeExchangeError, contract.ReasonPostOnlyRejected)
	_ = post

	mkt := b.ok(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.1", "clientOrderId": "mkt-1"})
	fills, _ := eng.Fills(bybitKey, "BTCUSDT", 100)
	size, notional, fee := decimal.Zero, decimal.Zero, decimal.Zero
	for _, f := range fills {
		if f.ClientOrderID == "mkt-1" {
			size, notional, fee = size.Add(f.Size), notional.Add(f.Size.Mul(f.Price)), fee.Add(f.Fee)
		}
	}
	want(t, "placeMarketOrder", mkt, map[string]any{"market": btc, "side": "BUY", "filledSize": d("0.1"), "filledPrice": notional.DivRound(size, 8), "fee": fee})

	positions := objects(t, b.ok(map[string]any{"operation": "getPositions"})["positions"])
	ps, _ := eng.Positions(bybitKey, "BTCUSDT")
	if len(positions) != 1 || len(ps) != 1 {
		t.Fatalf("getPositions: %v", positions)
	}
	want(t, "position", positions[0], map[string]any{"market": btc, "side": "LONG", "size": d("0.1"), "entryPrice": ps[0].EntryPrice,
		"markPrice": ps[0].MarkPrice, "unrealizedPnl": ps[0].UnrealizedPnL, "leverage": "5"})
	b.sim.AddFunding(bybitKey, "BTCUSDT", d("0.01"))
	got := objects(t, b.ok(map[string]any{"operation": "getFills", "market": "BTC"})["fills"])
	if len(got) != 1 {
		t.Fatalf("getFills: %v (want the trade, not the funding row)", got)
	}
	want(t, "fill", got[0], map[string]any{"orderId": mkt["orderId"], "market": btc, "side": "BUY", "size": d("0.1"), "fee": fee})

	trigger := info.MarkPrice.Mul(d("0.9")).Round(0)
	stop := b.ok(map[string]any{"operation": "placeStopOrder", "market": "BTC", "side": "SELL", "size": "0.1", "triggerPrice": trigger.String(), "clientOrderId": "stop-1"})
	want(t, "placeStopOrder", stop, map[string]any{"status": "PENDING", "triggerPrice": trigger})
	prot := b.ok(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.1",
		"entryPrice": ps[0].EntryPrice.String(), "tpPercent": 5, "slPercent": 2.5, "clientOrderId": "prot-1"})
	requireFields(t, "placeProtectionOrders", prot, map[string]kind{"tpOrderId": str, "slOrderId": str})
	batch := objects(t, b.ok(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
		{"market": "BTC", "side": "BUY", "size": "0.01", "price": farBelow.String()},
		{"market": "1000PEPE", "side": "SELL", "size": "1000", "price": "0.02"},
	}})["results"])
	if len(batch) != 2 || batch[0]["status"] != "OPEN" || batch[1]["status"] != "OPEN" || b.sim.Hits(http.MethodPost, "/v5/order/create-batch") != 1 {
		t.Fatalf("placeBatchOrder: %v", batch)
	}
	open := objects(t, b.ok(map[string]any{"operation": "getOrders"})["orders"])
	if len(open) != 6 { // limit, stop, TP, SL, two batch orders
		t.Fatalf("getOrders: %d orders %v", len(open), open)
	}
	byClient := map[any]map[string]any{}
	for _, o := range open {
		requireFields(t, "order", o, map[string]kind{"id": str, "market": str, "side": str, "type": str, "size": decStr,
			"price": decStr, "filledSize": decStr, "status": str, "createdAt": unixSec})
		byClient[o["clientOrderId"]] = o
	}
	want(t, "stop", byClient["stop-1"], map[string]any{"id": stop["orderId"], "type": "STOP_MARKET", "status": "PENDING", "triggerPrice": trigger, "createdAt": frozen.Unix()})
	want(t, "take-profit", byClient["prot-1-tp"], map[string]any{"id": prot["tpOrderId"], "type": "TAKE_PROFIT_MARKET", "side": "SELL", "status": "PENDING"})
	want(t, "stop-loss", byClient["prot-1-sl"], map[string]any{"id": prot["slOrderId"], "type": "STOP_MARKET", "side": "SELL", "status": "PENDING"})

	b.ok(map[string]any{"operation": "cancelOrder", "orderId": limit["orderId"], "market": "BTC"})
	if o, _ := eng.Order(bybitKey, held.ID); o.Status != paper.Cancelled {
		t.Errorf("the cancelled order is %s at Bybit", o.Status)
	}
	b.ok(map[string]any{"operation": "cancelOrder", "orderId": prot["tpOrderId"]}) // no market: found among open orders
	cancelled := b.ok(map[string]any{"operation": "cancelAllOrders", "market": "BTC"})
	// stop, stop-loss, the BTC batch order; the stop-loss is gone already
	// when the protection watcher saw its take-profit's cancel on the
	// account feed first (the pair rule).
	if n := cancelled["cancelledCount"]; n != float64(3) && n != float64(2) {
		t.Errorf("cancelAllOrders: %v", cancelled)
	}
	if left, _ := eng.OpenOrders(bybitKey, "1000PEPEUSDT"); len(left) != 1 {
		t.Errorf("cancelAllOrders on BTC touched 1000PEPE: %+v", left)
	}
	before, _ := eng.Fills(bybitKey, "BTCUSDT", 100)
	closed := b.ok(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
	after, _ := eng.Fills(bybitKey, "BTCUSDT", 100)
	size, notional = decimal.Zero, decimal.Zero
	for _, f := range after[:len(after)-len(before)] {
		size, notional = size.Add(f.Size), notional.Add(f.Size.Mul(f.Price))
	}
	want(t, "closeAllPositions", closed, map[string]any{"closedSize": d("0.1"), "avgClosePrice": notional.DivRound(size, 8)})
	if left, _ := eng.Positions(bybitKey, "BTCUSDT"); len(left) != 0 {
		t.Errorf("position left after closeAllPositions: %+v", left)
	}
}

// TestBybitOrderRules: rounding both ways, min notional refused before any
// upstream call, the same clientOrderId placing once, a batch of 10 in one
// call with one refusal in the middle, and a wrong secret as valid:false.
func TestBybitOrderRules(t *testing.T) {
	b := startBybit(t, bybitsim.Config{}, nil)
	mark := dec(t, b.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"])
	far := mark.Mul(decimal.RequireFromString("0.8")).Round(0)

	r := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.0159", "price": far.String() + ".17"})
	if r["size"] != "0.015" || r["price"] != far.String()+".1" {
		t.Errorf("buy rounding: %v", r)
	}
	high := mark.Mul(decimal.RequireFromString("1.2")).Round(0)
	r = b.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "SELL", "size": "0.0159", "price": high.String() + ".11"})
	if r["size"] != "0.015" || r["price"] != high.String()+".2" {
		t.Errorf("sell rounding: %v", r)
	}
	// Order creates only: the account feed's reconcile reads Bybit meanwhile.
	hits := b.sim.Hits(http.MethodPost, "/v5/order/create")
	b.fails(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.001", "price": "1000"}, http.StatusBadRequest, contract.CodeInvalidRequest, "")
	if b.sim.Hits(http.MethodPost, "/v5/order/create") != hits {
		t.Error("an order under the minimum notional reached Bybit")
	}

	first := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": far.String(), "clientOrderId": "once-1"})
	creates := b.sim.Hits(http.MethodPost, "/v5/order/create")
	again := b.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": far.String(), "clientOrderId": "once-1"})
	if again["orderId"] != first["orderId"] || b.sim.Hits(http.MethodPost, "/v5/order/create") != creates {
		t.Errorf("a repeat placed again: %v then %v", first, again)
	}

	var orders []map[string]any
	for i := range 10 {
		o := map[string]any{"market": "BTC", "side": "BUY", "size": "0.001", "price": far.String()}
		if i == 5 {
			o["size"] = "1000"
		}
		orders = append(orders, o)
	}
	batch := objects(t, b.ok(map[string]any{"operation": "placeBatchOrder", "orders": orders})["results"])
	if b.sim.Hits(http.MethodPost, "/v5/order/create-batch") != 1 || len(batch) != 10 {
		t.Fatalf("batch of 10: %d calls, %v", b.sim.Hits(http.MethodPost, "/v5/order/create-batch"), batch)
	}
	for i, res := range batch {
		if (i == 5) != (res["status"] == "REJECTED") {
			t.Errorf("batch order %d: %v", i, res)
		}
	}

	wrong := b.newCredential(b.Bootstrap().AccountID, contract.Bybit, contract.Mainnet, `{"apiKey":"`+bybitKey+`","apiSecret":"not-the-secret"}`)
	wantRejected(t, b.ok(map[string]any{"operation": "testCredentials", "credentialId": wrong}), contract.Bybit, "not-the-secret")
}

// TestBybitLostAnswerReconciled: Bybit places the order but its answer is
// lost (HTTP 502): the connector looks the order up by its clientOrderId
// and answers it as placed; a retry places nothing more.
func TestBybitLostAnswerReconciled(t *testing.T) {
	b := startBybit(t, bybitsim.Config{}, nil)
	mark := dec(t, b.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"])
	price := mark.Mul(decimal.RequireFromString("0.8")).Round(0).String()
	b.sim.FailNext(http.MethodPost, "/v5/order/create", bybitsim.Failure{Status: http.StatusBadGateway, After: true})
	body := map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": price, "clientOrderId": "lost-1"}
	first := b.ok(body)
	held, err := b.sim.Engine().OrderByClientID(bybitKey, "lost-1")
	if err != nil || first["status"] != "OPEN" || first["orderId"] == "" {
		t.Fatalf("lost answer: %v (Bybit holds %+v, %v)", first, held, err)
	}
	creates := b.sim.Hits(http.MethodPost, "/v5/order/create")
	if again := b.ok(body); again["orderId"] != first["orderId"] || b.sim.Hits(http.MethodPost, "/v5/order/create") != creates {
		t.Fatalf("retry: %v after %v, creates %d -> %d", again, first, creates, b.sim.Hits(http.MethodPost, "/v5/order/create"))
	}
	open := objects(t, b.ok(map[string]any{"operation": "getOrders", "market": "BTC"})["orders"])
	if len(open) != 1 || open[0]["id"] != first["orderId"] {
		t.Fatalf("orders %v: want the one order", open)
	}
}
