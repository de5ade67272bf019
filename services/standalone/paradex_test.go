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
	paradexsim "github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// A made-up Stark key pair and the account it signs for (never funded
// anywhere).
const (
	pdxAddress = "0x129c135ed63df9353885e292be4426b8ed6122b13c6c0e1bb787288a1f5adfa"
	pdxKey     = "0x543b6cf6c91817a87174aaea4fb370ac1c694e864d7740d728f8344d53e815"
	pdxPub     = "0x2c144d2f2d4fc61b6f8967f3ba0012a87d90140bcfe5a3e92e8df83258c960f"
)

// paradexEnv is a gateway whose Paradex connector talks to a simulator over
// HTTP, with a mainnet credential used through a live key.
type paradexEnv struct {
	*binanceEnv // the same helpers: do, ok, fails
	sim         *paradexsim.Server
}

func startParadex(t *testing.T, cfg paradexsim.Config, now func() time.Time) *paradexEnv {
	t.Helper()
	cfg.Accounts = map[string]string{pdxAddress: pdxPub}
	cfg.Now = now
	s := paradexsim.New(cfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	g := startGateway(t, func(c *Config) {
		c.Paradex.MainnetURL, c.Paradex.TestnetURL = srv.URL+"/v1", srv.URL+"/v1"
		if now != nil {
			c.Paradex.Now = now
		}
	})
	acct := g.Bootstrap().AccountID
	return &paradexEnv{sim: s, binanceEnv: &binanceEnv{
		testGateway: g,
		live:        g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		mainCred:    g.newCredential(acct, contract.Paradex, contract.Mainnet, `{"accountAddress":"`+pdxAddress+`","starkPrivateKey":"`+pdxKey+`"}`),
	}}
}

func (p *paradexEnv) market(sym string) paper.MarketInfo {
	p.t.Helper()
	m, err := p.sim.Engine().Market(sym)
	if err != nil {
		p.t.Fatal(err)
	}
	return m
}

// TestParadexAllOperations drives the 20 operations through the HTTP
// edge, NATS and the Paradex connector (Stark-signed orders, JWT auth) to
// the simulator over HTTP and compares the answers with its state.
func TestParadexAllOperations(t *testing.T) {
	var mu sync.Mutex
	frozen := time.Now().Truncate(time.Second)
	p := startParadex(t, paradexsim.Config{}, func() time.Time { mu.Lock(); defer mu.Unlock(); return frozen })
	eng := p.sim.Engine()
	const btc = "BTC-USD-PERP"
	d := decimal.RequireFromString

	book := p.ok(map[string]any{"operation": "getOrderbook", "market": "BTC", "depth": 5})
	checkLevels(t, "bids", book["bids"], 5)
	info := p.market(btc)
	want(t, "getMarkPrice", p.ok(map[string]any{"operation": "getMarkPrice", "market": btc}), map[string]any{"markPrice": info.MarkPrice})
	for _, iv := range []string{"15", "240", "1440"} {
		cs := objects(t, p.ok(map[string]any{"operation": "getCandles", "market": "BTC", "interval": iv, "limit": 3})["candles"])
		step, _ := strconv.Atoi(iv)
		if len(cs) != 3 || cs[1]["time"].(float64)-cs[0]["time"].(float64) != float64(step*60) {
			t.Fatalf("%s-minute candles: %v", iv, cs)
		}
	}
	fr := p.ok(map[string]any{"operation": "getFundingRate", "market": "BTC"})
	if next := int64(fr["nextFundingTime"].(float64)); next%3600 != 0 || next <= frozen.Unix() || next > frozen.Unix()+3600 {
		t.Errorf("nextFundingTime %d: want the next whole hour (continuous funding)", next)
	}
	if fr["fundingIntervalHours"] != float64(8) {
		t.Errorf("getFundingRate: %v", fr)
	}
	entries := objects(t, p.ok(map[string]any{"operation": "getMarketsWithFunding"})["markets"])
	if len(entries) < 3 {
		t.Errorf("getMarketsWithFunding: %v", entries)
	}
	requireFields(t, "getFeeInfo", p.ok(map[string]any{"operation": "getFeeInfo", "market": "BTC"}), map[string]kind{"makerFee": decStr, "takerFee": decStr})
	bal := p.ok(map[string]any{"operation": "getBalance"})
	requireFields(t, "getBalance", bal, map[string]kind{"equity": decStr, "freeCollateral": decStr, "accountValue": decStr})
	if tc := p.ok(map[string]any{"operation": "testCredentials"}); tc["valid"] != true || tc["exchange"] != "paradex" || tc["reason"] != nil {
		t.Errorf("testCredentials: %v", tc)
	}
	otherKey := "0x" + strings.Repeat("3", 62)
	wrong := p.newCredential(p.Bootstrap().AccountID, contract.Paradex, contract.Mainnet, `{"accountAddress":"`+pdxAddress+`","starkPrivateKey":"`+otherKey+`"}`)
	wantRejected(t, p.ok(map[string]any{"operation": "testCredentials", "credentialId": wrong}), contract.Paradex, otherKey)
	if lev := p.ok(map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 5}); lev["leverage"] != float64(5) {
		t.Errorf("setLeverage: %v", lev)
	}

	far := info.MarkPrice.Mul(d("0.8")).Round(0)
	limit := p.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": far.String(), "clientOrderId": "lim-1"})
	want(t, "placeLimitOrder", limit, map[string]any{"market": btc, "side": "BUY", "size": d("0.01"), "price": far, "status": "OPEN"})
	if id := limit["orderId"].(string); len(id) < 20 {
		t.Errorf("order id %q: Paradex ids are long digit strings", id)
	}
	p.fails(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
		"price": info.MarkPrice.Mul(d("1.02")).Round(0).String(), "postOnly": true}, http.StatusBadGateway, contract.CodeExchangeError, contract.ReasonPostOnlyRejected)

	mkt := p.ok(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.1", "clientOrderId": "mkt-1"})
	want(t, "placeMarketOrder", mkt, map[string]any{"market": btc, "filledSize": d("0.1")})
	if !dec(t, mkt["filledPrice"]).IsPositive() {
		t.Errorf("placeMarketOrder: %v", mkt)
	}
	positions := objects(t, p.ok(map[string]any{"operation": "getPositions"})["positions"])
	if len(positions) != 1 {
		t.Fatalf("getPositions: %v", positions)
	}
	want(t, "position", positions[0], map[string]any{"market": btc, "side": "LONG", "size": d("0.1")})
	if held, _ := eng.Positions(pdxAddress, btc); len(held) != 1 || !held[0].Size.Equal(d("0.1")) {
		t.Fatalf("Paradex holds %+v", held)
	}
	if fills := objects(t, p.ok(map[string]any{"operation": "getFills", "market": "BTC"})["fills"]); len(fills) == 0 {
		t.Fatal("getFills: none")
	}
	trigger := info.MarkPrice.Mul(d("0.9")).Round(0)
	stop := p.ok(map[string]any{"operation": "placeStopOrder", "market": "BTC", "side": "SELL", "size": "0.1", "triggerPrice": trigger.String(), "clientOrderId": "stop-1"})
	want(t, "placeStopOrder", stop, map[string]any{"status": "PENDING", "triggerPrice": trigger})
	prot := p.ok(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.1",
		"entryPrice": info.MarkPrice.String(), "tpPercent": 5, "slPercent": 20, "clientOrderId": "prot-1"})
	requireFields(t, "placeProtectionOrders", prot, map[string]kind{"tpOrderId": str, "slOrderId": str})
	batch := objects(t, p.ok(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
		{"market": "BTC", "side": "BUY", "size": "0.01", "price": far.String()},
		{"market": "ETH", "side": "SELL", "size": "0.1", "price": "9000"},
	}})["results"])
	if len(batch) != 2 || batch[0]["status"] != "OPEN" || batch[1]["status"] != "OPEN" {
		t.Fatalf("placeBatchOrder: %v", batch)
	}
	open := objects(t, p.ok(map[string]any{"operation": "getOrders"})["orders"])
	if len(open) != 6 { // limit, stop, TP, SL, two batch orders
		t.Fatalf("getOrders: %d orders %v", len(open), open)
	}
	p.ok(map[string]any{"operation": "cancelOrder", "orderId": limit["orderId"], "market": "BTC"})
	if c := p.ok(map[string]any{"operation": "cancelAllOrders", "market": "BTC"}); c["cancelledCount"] != float64(4) { // stop, TP, SL, BTC batch order
		t.Errorf("cancelAllOrders: %v", c)
	}
	closed := p.ok(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
	want(t, "closeAllPositions", closed, map[string]any{"closedSize": d("0.1")})
	if left, _ := eng.Positions(pdxAddress, btc); len(left) != 0 {
		t.Errorf("position left: %+v", left)
	}
}

func TestProtectionPairNeverOutlivesPositionParadex(t *testing.T) {
	t.Parallel() // each on its own gateway; most of the time is waiting for the watcher
	p := startParadex(t, paradexsim.Config{}, nil)
	orphanScenario(t, protectionVenue{do: p.ok, engine: p.sim.Engine(), symbol: "BTC-USD-PERP", market: "BTC", size: "0.01"})
}
