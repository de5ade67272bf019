package standalone

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	okxsim "github.com/perpgate/perpgate/services/connectors/okx/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

const (
	okxKey      = "okx-main-key"
	okxSecret   = "okx-main-secret"
	okxPass     = "okx-main-pass"
	okxDemoKey  = "okx-demo-key"
	okxDemoPass = "okx-demo-pass"
)

// okxEnv is a gateway whose OKX connector talks to a simulator over HTTP,
// with a mainnet credential used through a live key and a demo (testnet)
// one through a test key.
type okxEnv struct {
	*binanceEnv // the same helpers: do, ok, fails
	sim         *okxsim.Server
}

func startOKX(t *testing.T, cfg okxsim.Config, now func() time.Time) *okxEnv {
	t.Helper()
	cfg.Keys = map[string]okxsim.Key{okxKey: {Secret: okxSecret, Passphrase: okxPass}, okxDemoKey: {Secret: okxSecret, Passphrase: okxDemoPass, Demo: true}}
	cfg.Now = now
	s := okxsim.New(cfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	g := startGateway(t, func(c *Config) {
		c.OKX.MainnetURL, c.OKX.TestnetURL = srv.URL, srv.URL
		c.OKX.Now = now
	})
	acct := g.Bootstrap().AccountID
	return &okxEnv{sim: s, binanceEnv: &binanceEnv{
		testGateway: g,
		live:        g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		mainCred:    g.newCredential(acct, contract.OKX, contract.Mainnet, `{"apiKey":"`+okxKey+`","apiSecret":"`+okxSecret+`","passphrase":"`+okxPass+`"}`),
		testCred:    g.newCredential(acct, contract.OKX, contract.Testnet, `{"apiKey":"`+okxDemoKey+`","apiSecret":"`+okxSecret+`","passphrase":"`+okxDemoPass+`"}`),
	}}
}

func (o *okxEnv) market(inst string) paper.MarketInfo {
	o.t.Helper()
	m, err := o.sim.Engine().Market(inst)
	if err != nil {
		o.t.Fatal(err)
	}
	return m
}

// TestOKXAllOperations drives the 20 operations through the HTTP edge,
// NATS and the OKX connector to the simulator over HTTP, with a clock that
// stands still. Sizes are base units on both sides: BTC-USDT-SWAP counts
// contracts of 0.01 BTC, DOGE-USDT-SWAP of 10 DOGE, and the simulator's
// engine holds base units, so every size is compared with it directly.
func TestOKXAllOperations(t *testing.T) {
	var mu sync.Mutex
	frozen := time.Now().Truncate(time.Second)
	o := startOKX(t, okxsim.Config{}, func() time.Time { mu.Lock(); defer mu.Unlock(); return frozen })
	eng := o.sim.Engine()
	const btc = "BTC-USDT-PERP"
	d := decimal.RequireFromString

	book := o.ok(map[string]any{"operation": "getOrderbook", "market": "BTC", "depth": 5})
	checkLevels(t, "bids", book["bids"], 5)
	wantBook, _ := eng.Orderbook("BTC-USDT-SWAP", 5)
	for i, l := range book["bids"].([]any) {
		if p := l.([]any); p[0] != wantBook.Bids[i].Price.String() || !dec(t, p[1]).Equal(wantBook.Bids[i].Size) {
			t.Errorf("bids[%d] = %v, OKX holds %v (base units)", i, p, wantBook.Bids[i])
		}
	}
	info := o.market("BTC-USDT-SWAP")
	mark := o.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC-USDT-PERP"})
	want(t, "getMarkPrice", mark, map[string]any{"markPrice": info.MarkPrice, "indexPrice": info.IndexPrice})
	cs := objects(t, o.ok(map[string]any{"operation": "getCandles", "market": btc, "interval": "60", "limit": 5})["candles"])
	if len(cs) != 5 {
		t.Fatalf("candles: %v", cs)
	}
	for i := 1; i < len(cs); i++ {
		if cs[i]["time"].(float64)-cs[i-1]["time"].(float64) != 3600 {
			t.Fatalf("candles not oldest first an hour apart: %v", cs)
		}
	}
	funding := o.ok(map[string]any{"operation": "getFundingRate", "market": "BTC"})
	want(t, "getFundingRate", funding, map[string]any{"fundingRate": info.FundingRate, "nextFundingTime": info.NextFundingTime.Unix()})
	entries := objects(t, o.ok(map[string]any{"operation": "getMarketsWithFunding"})["markets"])
	if len(entries) != 3 {
		t.Errorf("getMarketsWithFunding: %v", entries)
	}
	requireFields(t, "getFeeInfo", o.ok(map[string]any{"operation": "getFeeInfo", "market": "BTC"}), map[string]kind{"makerFee": decStr, "takerFee": decStr})
	bal := o.ok(map[string]any{"operation": "getBalance"})
	acct, _ := eng.Balance(okxKey)
	want(t, "getBalance", bal, map[string]any{"exchange_type": "okx", "equity": acct.Equity})
	if tc := o.ok(map[string]any{"operation": "testCredentials"}); tc["valid"] != true || tc["exchange"] != "okx" {
		t.Errorf("testCredentials: %v", tc)
	}
	if lev := o.ok(map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 5}); lev["leverage"] != float64(5) {
		t.Errorf("setLeverage: %v", lev)
	}

	far := info.MarkPrice.Mul(d("0.8")).Round(0)
	limit := o.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.0123", "price": far.String(), "clientOrderId": "lim1"})
	want(t, "placeLimitOrder", limit, map[string]any{"market": btc, "side": "BUY", "size": d("0.0123"), "price": far, "status": "OPEN"})
	if held, err := eng.OrderByClientID(okxKey, "lim1"); err != nil || !held.Size.Equal(d("0.0123")) {
		t.Fatalf("OKX holds %+v (%v): 1.23 contracts of 0.01 BTC", held, err)
	}
	o.fails(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
		"price": info.MarkPrice.Mul(d("1.02")).Round(0).String(), "postOnly": true, "clientOrderId": "po1"}, http.StatusBadGateway, contract.CodeExchangeError, contract.ReasonPostOnlyRejected)

	mkt := o.ok(map[string]any{"operation": "placeMarketOrder", "market": "DOGE", "side": "BUY", "size": "1234", "clientOrderId": "mkt1"})
	dogeFills, _ := eng.Fills(okxKey, "DOGE-USDT-SWAP", 100)
	size, fee := decimal.Zero, decimal.Zero
	for _, f := range dogeFills {
		size, fee = size.Add(f.Size), fee.Add(f.Fee)
	}
	want(t, "placeMarketOrder", mkt, map[string]any{"market": "DOGE-USDT-PERP", "filledSize": d("1230"), "fee": fee}) // floored to 123 contracts of 10
	if !size.Equal(d("1230")) || !fee.IsPositive() {
		t.Errorf("OKX filled %s DOGE, fee %s", size, fee)
	}
	positions := objects(t, o.ok(map[string]any{"operation": "getPositions"})["positions"])
	if len(positions) != 1 {
		t.Fatalf("getPositions: %v", positions)
	}
	want(t, "position", positions[0], map[string]any{"market": "DOGE-USDT-PERP", "side": "LONG", "size": d("1230")})
	fills := objects(t, o.ok(map[string]any{"operation": "getFills", "market": "DOGE"})["fills"])
	if len(fills) != len(dogeFills) {
		t.Fatalf("getFills: %v", fills)
	}
	trigger := o.market("DOGE-USDT-SWAP").MarkPrice.Mul(d("0.9")).Round(5)
	stop := o.ok(map[string]any{"operation": "placeStopOrder", "market": "DOGE", "side": "SELL", "size": "1230", "triggerPrice": trigger.String(), "clientOrderId": "stop1"})
	want(t, "placeStopOrder", stop, map[string]any{"status": "PENDING", "triggerPrice": trigger})
	prot := o.ok(map[string]any{"operation": "placeProtectionOrders", "market": "DOGE", "side": "LONG", "size": "1230",
		"entryPrice": o.market("DOGE-USDT-SWAP").MarkPrice.String(), "tpPercent": 10, "slPercent": 20, "clientOrderId": "prot1"})
	requireFields(t, "placeProtectionOrders", prot, map[string]kind{"tpOrderId": str, "slOrderId": str})
	batch := objects(t, o.ok(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
		{"market": "BTC", "side": "BUY", "size": "0.01", "price": far.String()},
		{"market": "ETH", "side": "SELL", "size": "0.5", "price": "9000"},
	}})["results"])
	if len(batch) != 2 || batch[0]["status"] != "OPEN" || batch[1]["status"] != "OPEN" {
		t.Fatalf("placeBatchOrder: %v", batch)
	}
	open := objects(t, o.ok(map[string]any{"operation": "getOrders"})["orders"])
	if len(open) != 5 { // limit, stop, the oco pair, two batch orders
		t.Fatalf("getOrders: %d orders %v", len(open), open)
	}
	for _, ord := range open {
		requireFields(t, "order", ord, map[string]kind{"id": str, "market": str, "side": str, "type": str, "size": decStr,
			"price": decStr, "filledSize": decStr, "status": str, "createdAt": unixSec})
		if ord["id"] == limit["orderId"] {
			want(t, "limit order", ord, map[string]any{"market": btc, "size": d("0.0123"), "price": far, "status": "OPEN"})
		}
	}
	o.ok(map[string]any{"operation": "cancelOrder", "orderId": limit["orderId"], "market": "BTC"})
	if held, _ := eng.OrderByClientID(okxKey, "lim1"); held.Status != paper.Cancelled {
		t.Errorf("the cancelled order is %s at OKX", held.Status)
	}
	if c := o.ok(map[string]any{"operation": "cancelAllOrders", "market": "DOGE"}); c["cancelledCount"] != float64(2) { // stop, oco
		t.Errorf("cancelAllOrders on DOGE: %v", c)
	}
	closed := o.ok(map[string]any{"operation": "closeAllPositions", "market": "DOGE"})
	want(t, "closeAllPositions", closed, map[string]any{"closedSize": d("1230")})
	if left, _ := eng.Positions(okxKey, "DOGE-USDT-SWAP"); len(left) != 0 {
		t.Errorf("position left: %+v", left)
	}

	// The demo credential, through a test key, carries the demo header
	// (the simulator refuses a demo key without it, and a live key with it).
	tb := o.call(o.Bootstrap().APIKey, map[string]any{"operation": "getBalance", "credentialId": o.testCred})
	if tb.status != http.StatusOK || tb.body["exchange_type"] != "okx" {
		t.Errorf("demo getBalance: %d %s", tb.status, tb.raw)
	}
}

// TestOKXOrderRules: min size refused before any call, the same
// clientOrderId placing once, a batch of 10 in one call with one refusal
// in the middle, a wrong passphrase as valid:false, and a spot-mode account
// told which mode to switch to.
func TestOKXOrderRules(t *testing.T) {
	o := startOKX(t, okxsim.Config{}, nil)
	mark := dec(t, o.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"])
	far := mark.Mul(decimal.RequireFromString("0.8")).Round(0).String()

	hits := o.sim.Hits(http.MethodPost, "/api/v5/trade/order") // orders only: the account feed may read meanwhile
	o.fails(map[string]any{"operation": "placeLimitOrder", "market": "DOGE", "side": "BUY", "size": "5", "price": "0.3"}, http.StatusBadRequest, contract.CodeInvalidRequest, "")
	if o.sim.Hits(http.MethodPost, "/api/v5/trade/order") != hits {
		t.Error("an order under one contract reached OKX")
	}
	body := map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": far, "clientOrderId": "once-1"}
	first := o.ok(body)
	creates := o.sim.Hits(http.MethodPost, "/api/v5/trade/order")
	if again := o.ok(body); again["orderId"] != first["orderId"] || o.sim.Hits(http.MethodPost, "/api/v5/trade/order") != creates {
		t.Errorf("a repeat placed again: %v then %v", first, again)
	}

	var orders []map[string]any
	for i := range 10 {
		ord := map[string]any{"market": "BTC", "side": "BUY", "size": "0.01", "price": far, "clientOrderId": "b" + strconv.Itoa(i)}
		if i == 5 {
			ord["size"] = "100000"
		}
		orders = append(orders, ord)
	}
	batch := objects(t, o.ok(map[string]any{"operation": "placeBatchOrder", "orders": orders})["results"])
	if n := o.sim.Hits(http.MethodPost, "/api/v5/trade/batch-orders"); n != 1 || len(batch) != 10 {
		t.Fatalf("batch of 10: %d calls, %v", n, batch)
	}
	for i, r := range batch {
		if (i == 5) != (r["status"] == "REJECTED") {
			t.Errorf("batch order %d: %v", i, r)
		}
	}

	wrong := o.newCredential(o.Bootstrap().AccountID, contract.OKX, contract.Mainnet, `{"apiKey":"`+okxKey+`","apiSecret":"`+okxSecret+`","passphrase":"not-it"}`)
	wantRejected(t, o.ok(map[string]any{"operation": "testCredentials", "credentialId": wrong}), contract.OKX, "not-it")

	o.sim.SetAccountMode(okxKey, "1", "net_mode")
	r := o.do(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": far})
	if r.code() != string(contract.CodeExchangeError) || !strings.Contains(strings.ToLower(string(r.raw)), "futures") {
		t.Errorf("spot-mode account: %d %s", r.status, r.raw)
	}
	if tc := o.ok(map[string]any{"operation": "testCredentials"}); tc["valid"] != true {
		t.Errorf("spot-mode account's credential: %v, want valid", tc)
	}
}

func TestProtectionPairNeverOutlivesPositionOKX(t *testing.T) {
	t.Parallel() // each on its own gateway; most of the time is waiting for the watcher
	o := startOKX(t, okxsim.Config{}, nil)
	orphanScenario(t, protectionVenue{do: o.ok, engine: o.sim.Engine(), symbol: "BTC-USDT-SWAP", market: "BTC", size: "0.01"})
}
