package standalone

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// Throwaway keys for the simulator; they hold nothing anywhere.
const (
	hlTestAccount  = "0x5e9ee1089755c3435139848e47e6635505d5a13a"
	hlTestAgentKey = "0x0123456789012345678901234567890123456789012345678901234567890123"
	hlMainAccount  = "0x1d9470d4b963f552e6f671a81619d395877bf409"
	hlMainAgentKey = "e908f86dbb4d55ac876378565aafeabc187f6690f046459397b17d9b9a19688e"
	hlStrangerKey  = "0x49a57deb9c9924b763715adc13ccebe84fb6492dbc9bf32096283485aac07011"
)

func hlAddress(t *testing.T, key string) string {
	t.Helper()
	k, err := hyperliquid.ParsePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return hyperliquid.Address(k.PubKey())
}

// hlEnv is a gateway whose Hyperliquid connector talks to a simulator,
// with a testnet credential (bootstrap test key) and a mainnet one (live key).
type hlEnv struct {
	*testGateway
	sim                *sim.Sim
	testCred, mainCred string
	liveKey            string
}

func startHyperliquid(t *testing.T) *hlEnv {
	t.Helper()
	s := sim.New(sim.Config{Seed: 7})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	g := startGateway(t, func(c *Config) { c.Hyperliquid.URL = srv.URL })
	for _, acct := range []string{hlTestAccount, hlMainAccount} {
		if err := s.AddUser(acct, decimal.NewFromInt(100000)); err != nil {
			t.Fatal(err)
		}
	}
	// Agents are approved per network: a signature with the wrong source
	// ("a" mainnet, "b" testnet) recovers an unknown signer.
	s.ApproveAgent(hlTestAccount, hlAddress(t, hlTestAgentKey), false)
	s.ApproveAgent(hlMainAccount, hlAddress(t, hlMainAgentKey), true)
	secret := func(acct, key string) string {
		return fmt.Sprintf(`{"accountAddress":%q,"agentPrivateKey":%q}`, acct, key)
	}
	e := &hlEnv{testGateway: g, sim: s}
	e.testCred = g.newCredential(g.Bootstrap().AccountID, contract.Hyperliquid, contract.Testnet, secret(hlTestAccount, hlTestAgentKey))
	e.mainCred = g.newCredential(g.Bootstrap().AccountID, contract.Hyperliquid, contract.Mainnet, secret(hlMainAccount, hlMainAgentKey))
	e.liveKey = g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive})
	return e
}

// do calls with the testnet credential and requires success.
func (e *hlEnv) do(body map[string]any) map[string]any {
	e.t.Helper()
	return e.doWith(e.Bootstrap().APIKey, e.testCred, body)
}

func (e *hlEnv) doWith(key, cred string, body map[string]any) map[string]any {
	e.t.Helper()
	body["credentialId"] = cred
	r := e.call(key, body)
	if r.status != http.StatusOK || r.body["success"] != true {
		e.t.Fatalf("%v: status %d body %s", body["operation"], r.status, r.raw)
	}
	return r.body
}

func (e *hlEnv) rejectedWith(body map[string]any, reason contract.Reason) {
	e.t.Helper()
	body["credentialId"] = e.testCred
	r := e.call(e.Bootstrap().APIKey, body)
	if r.status != http.StatusBadGateway || r.code() != "EXCHANGE_ERROR" || r.body["reason"] != string(reason) {
		e.t.Fatalf("%v: want 502 EXCHANGE_ERROR %s, got %d %s", body["operation"], reason, r.status, r.raw)
	}
}

// TestHyperliquidAllOperations drives the 20 operations through the HTTP
// edge, NATS and the connector to the simulator, checking SPEC §4 fields
// and canonical markets.
func TestHyperliquidAllOperations(t *testing.T) {
	e := startHyperliquid(t)
	const btc = "BTC-USD-PERP"

	book := e.do(map[string]any{"operation": "getOrderbook", "market": "BTC", "depth": 5})
	checkLevels(t, "bids", book["bids"], 5)
	checkLevels(t, "asks", book["asks"], 5)

	mark := e.do(map[string]any{"operation": "getMarkPrice", "market": "btc"})
	requireFields(t, "getMarkPrice", mark, map[string]kind{"markPrice": decStr, "indexPrice": decStr})

	cs := objects(t, e.do(map[string]any{"operation": "getCandles", "market": "BTC-PERP", "interval": "60", "limit": 10})["candles"])
	if len(cs) != 10 {
		t.Fatalf("want 10 candles, got %d", len(cs))
	}
	for _, c := range cs {
		requireFields(t, "candle", c, map[string]kind{"time": unixSec, "open": decStr, "high": decStr, "low": decStr, "close": decStr, "volume": decStr})
	}

	fr := e.do(map[string]any{"operation": "getFundingRate", "market": btc})
	requireFields(t, "getFundingRate", fr, map[string]kind{"fundingRate": decStr, "nextFundingTime": unixSec})
	if int64(fr["nextFundingTime"].(float64))%3600 != 0 {
		t.Errorf("nextFundingTime %v is not a whole hour", fr["nextFundingTime"])
	}

	symbols := map[string]bool{}
	for _, m := range objects(t, e.do(map[string]any{"operation": "getMarketsWithFunding"})["markets"]) {
		requireFields(t, "market", m, map[string]kind{"symbol": str, "markPrice": decStr, "fundingRate": decStr, "openInterest": decStr})
		symbols[m["symbol"].(string)] = true
	}
	for _, want := range []string{"BTC-USD-PERP", "ETH-USD-PERP", "1000PEPE-USD-PERP"} {
		if !symbols[want] {
			t.Errorf("getMarketsWithFunding lacks %s: %v", want, symbols)
		}
	}

	fees := e.do(map[string]any{"operation": "getFeeInfo", "market": btc})
	if fees["makerFee"] != "1.5" || fees["takerFee"] != "4.5" {
		t.Errorf("fees in bps: %v", fees)
	}

	bal := e.do(map[string]any{"operation": "getBalance"})
	requireFields(t, "getBalance", bal, map[string]kind{"equity": decStr, "freeCollateral": decStr, "accountValue": decStr})
	if bal["exchange_type"] != "hyperliquid" || bal["equity"] != "100000" {
		t.Errorf("getBalance: %v", bal)
	}

	tc := e.do(map[string]any{"operation": "testCredentials"})
	if tc["valid"] != true || tc["exchange"] != "hyperliquid" {
		t.Errorf("testCredentials: %v", tc)
	}

	lim := e.do(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "55000.04"})
	requireFields(t, "placeLimitOrder", lim, map[string]kind{"orderId": str, "market": str, "side": str, "size": decStr, "price": decStr, "status": str})
	if lim["market"] != btc || lim["status"] != "OPEN" || lim["price"] != "55000" || lim["size"] != "0.01" {
		t.Errorf("placeLimitOrder: %v (price rounds down to 5 significant figures)", lim)
	}
	os := objects(t, e.do(map[string]any{"operation": "getOrders", "market": btc})["orders"])
	if len(os) != 1 {
		t.Fatalf("getOrders: %v", os)
	}
	requireFields(t, "order", os[0], map[string]kind{"id": str, "market": str, "side": str, "type": str, "size": decStr, "price": decStr, "filledSize": decStr, "status": str, "createdAt": unixSec})
	if os[0]["id"] != lim["orderId"] || os[0]["market"] != btc || os[0]["status"] != "OPEN" || os[0]["type"] != "LIMIT" {
		t.Errorf("order: %v", os[0])
	}
	// No market: the connector finds the order's coin with orderStatus.
	if r := e.do(map[string]any{"operation": "cancelOrder", "orderId": lim["orderId"]}); len(r) != 1 {
		t.Errorf("cancelOrder returns success only: %v", r)
	}

	mkt := e.do(map[string]any{"operation": "placeMarketOrder", "market": btc, "side": "BUY", "size": "0.01"})
	requireFields(t, "placeMarketOrder", mkt, map[string]kind{"orderId": str, "filledPrice": decStr, "filledSize": decStr, "fee": decStr})
	if mkt["filledSize"] != "0.01" || !dec(t, mkt["fee"]).IsPositive() {
		t.Errorf("placeMarketOrder: %v", mkt)
	}

	ps := objects(t, e.do(map[string]any{"operation": "getPositions"})["positions"])
	if len(ps) != 1 {
		t.Fatalf("getPositions: %v", ps)
	}
	requireFields(t, "position", ps[0], map[string]kind{"market": str, "side": str, "size": decStr, "entryPrice": decStr, "markPrice": decStr, "unrealizedPnl": decStr, "leverage": decStr})
	if ps[0]["market"] != btc || ps[0]["side"] != "LONG" || ps[0]["size"] != "0.01" {
		t.Errorf("position: %v", ps[0])
	}

	fills := objects(t, e.do(map[string]any{"operation": "getFills", "market": btc})["fills"])
	if len(fills) == 0 {
		t.Fatal("no fills")
	}
	for _, f := range fills {
		requireFields(t, "fill", f, map[string]kind{"id": str, "market": str, "side": str, "size": decStr, "price": decStr, "fee": decStr, "timestamp": unixSec})
		if f["market"] != btc {
			t.Errorf("fill market %v", f["market"])
		}
	}

	stop := e.do(map[string]any{"operation": "placeStopOrder", "market": btc, "side": "SELL", "size": "0.01", "triggerPrice": "50000"})
	requireFields(t, "placeStopOrder", stop, map[string]kind{"orderId": str, "status": str, "triggerPrice": decStr})
	if stop["status"] != "PENDING" || stop["triggerPrice"] != "50000" {
		t.Errorf("placeStopOrder: %v", stop)
	}

	prot := e.do(map[string]any{"operation": "placeProtectionOrders", "market": btc, "side": "LONG", "size": "0.01", "entryPrice": "60000", "tpPercent": 10, "slPercent": 10})
	requireFields(t, "placeProtectionOrders", prot, map[string]kind{"tpOrderId": str, "slOrderId": str})
	last := e.sim.ReceivedOrders()
	tp, sl := last[len(last)-2], last[len(last)-1]
	if tp.Type.Trigger == nil || tp.Type.Trigger.Tpsl != "tp" || tp.Type.Trigger.TriggerPx != "66000" || sl.Type.Trigger == nil ||
		sl.Type.Trigger.Tpsl != "sl" || sl.Type.Trigger.TriggerPx != "54000" || tp.IsBuy || !tp.ReduceOnly || !sl.ReduceOnly {
		t.Errorf("protection legs: %+v %+v", tp, sl)
	}

	batch := e.do(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
		{"market": "BTC", "side": "BUY", "size": "0.001", "price": "50000", "orderType": "LIMIT"},
		{"market": "ETH", "side": "BUY", "size": "0.01", "price": "2500", "orderType": "LIMIT"},
	}})
	results := objects(t, batch["results"])
	if len(results) != 2 {
		t.Fatalf("batch: %v", batch)
	}
	for _, r := range results {
		requireFields(t, "batch result", r, map[string]kind{"orderId": str, "status": str})
		if r["status"] != "OPEN" {
			t.Errorf("batch result: %v", r)
		}
	}

	// BTC: the stop, both protection legs and one batch order.
	if n := e.do(map[string]any{"operation": "cancelAllOrders", "market": btc})["cancelledCount"]; n != float64(4) {
		t.Errorf("cancelAllOrders: cancelledCount %v, want 4", n)
	}
	if os := objects(t, e.do(map[string]any{"operation": "getOrders"})["orders"]); len(os) != 1 || os[0]["market"] != "ETH-USD-PERP" {
		t.Errorf("after cancelAllOrders BTC only the ETH order stays: %v", os)
	}

	closed := e.do(map[string]any{"operation": "closeAllPositions", "market": btc})
	requireFields(t, "closeAllPositions", closed, map[string]kind{"closedSize": decStr, "avgClosePrice": decStr})
	if closed["closedSize"] != "0.01" {
		t.Errorf("closeAllPositions: %v", closed)
	}
	if ps := objects(t, e.do(map[string]any{"operation": "getPositions", "market": btc})["positions"]); len(ps) != 0 {
		t.Errorf("position left after closeAllPositions: %v", ps)
	}

	lev := e.do(map[string]any{"operation": "setLeverage", "market": btc, "leverage": 5})
	requireFields(t, "setLeverage", lev, map[string]kind{"leverage": integer})
	if lev["leverage"] != float64(5) {
		t.Errorf("setLeverage: %v", lev)
	}

	t.Run("multiplier listing both ways", func(t *testing.T) {
		for _, m := range []string{"kPEPE", "1000PEPE", "1000PEPE-USD-PERP"} {
			requireFields(t, m, e.do(map[string]any{"operation": "getMarkPrice", "market": m}), map[string]kind{"markPrice": decStr})
		}
		p := e.do(map[string]any{"operation": "placeLimitOrder", "market": "1000PEPE", "side": "BUY", "size": "1000", "price": "0.011"})
		if p["market"] != "1000PEPE-USD-PERP" {
			t.Errorf("placeLimitOrder market %v", p["market"])
		}
		if w := e.sim.ReceivedOrders(); w[len(w)-1].Asset != 2 || w[len(w)-1].Price != "0.011" {
			t.Errorf("kPEPE order on the wire: %+v", w[len(w)-1])
		}
		os := objects(t, e.do(map[string]any{"operation": "getOrders", "market": "kPEPE"})["orders"])
		if len(os) != 1 || os[0]["market"] != "1000PEPE-USD-PERP" {
			t.Errorf("getOrders kPEPE: %v", os)
		}
	})

	t.Run("mainnet credential signs with source a", func(t *testing.T) {
		tc := e.doWith(e.liveKey, e.mainCred, map[string]any{"operation": "testCredentials"})
		if tc["valid"] != true {
			t.Fatalf("testCredentials: %v", tc)
		}
		// The simulator approved this agent on mainnet only: the order
		// passes only if signed for mainnet, though the URL is the override.
		p := e.doWith(e.liveKey, e.mainCred, map[string]any{"operation": "placeLimitOrder", "market": btc, "side": "SELL", "size": "0.01", "price": "70000"})
		if p["status"] != "OPEN" {
			t.Errorf("mainnet placeLimitOrder: %v", p)
		}
		e.doWith(e.liveKey, e.mainCred, map[string]any{"operation": "cancelOrder", "orderId": p["orderId"], "market": btc})
	})
}

// TestHyperliquidInnerErrors: per-order errors inside a status-ok answer
// become EXCHANGE_ERROR with the right reason.
func TestHyperliquidInnerErrors(t *testing.T) {
	e := startHyperliquid(t)
	tests := []struct {
		name   string
		body   map[string]any
		reason contract.Reason
	}{
		{"post-only would cross", map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "70000", "postOnly": true}, contract.ReasonPostOnlyRejected},
		{"insufficient margin", map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "100", "price": "50000"}, contract.ReasonInsufficientMargin},
		{"reduce-only on a flat position", map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "SELL", "size": "0.01", "reduceOnly": true}, contract.ReasonInvalidOrder},
		{"cancel of an unknown order", map[string]any{"operation": "cancelOrder", "market": "BTC", "orderId": "123456"}, contract.ReasonOrderNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { e.rejectedWith(tc.body, tc.reason) })
	}
	t.Run("batch keeps the good order", func(t *testing.T) {
		res := objects(t, e.do(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
			{"market": "BTC", "side": "BUY", "size": "0.001", "price": "50000", "postOnly": true},
			{"market": "BTC", "side": "BUY", "size": "0.001", "price": "70000", "postOnly": true},
		}})["results"])
		errObj, _ := res[1]["error"].(map[string]any)
		if res[0]["status"] != "OPEN" || res[1]["status"] != "REJECTED" || errObj["reason"] != "POST_ONLY_REJECTED" {
			t.Fatalf("batch: %v", res)
		}
	})
}

// TestHyperliquidMarketOrderSlippage: a market order is an IOC limit
// bounded by mid ± 5% (the default), never beyond it.
func TestHyperliquidMarketOrderSlippage(t *testing.T) {
	e := startHyperliquid(t)
	if _, err := e.sim.Engine().SetMarkPrice("BTC", decimal.RequireFromString("61234.5")); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"BUY", "SELL"} {
		e.do(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": side, "size": "0.01"})
		w := e.sim.ReceivedOrders()
		o := w[len(w)-1]
		mid := decimal.RequireFromString("61234.5") // the book is symmetric around mark
		px := decimal.RequireFromString(o.Price)
		bound := mid.Mul(decimal.RequireFromString("1.05"))
		ok := px.LessThanOrEqual(bound) && px.GreaterThan(mid.Mul(decimal.RequireFromString("1.049")))
		if side == "SELL" {
			bound = mid.Mul(decimal.RequireFromString("0.95"))
			ok = px.GreaterThanOrEqual(bound) && px.LessThan(mid.Mul(decimal.RequireFromString("0.951")))
		}
		if o.Type.Limit == nil || o.Type.Limit.TIF != "Ioc" || !ok || len(o.Price) > 6 {
			t.Errorf("%s: wire order %+v: want an IOC limit within 5%% of mid %s (bound %s), 5 significant figures", side, o, mid, bound)
		}
	}
}

// TestHyperliquidClientOrderID: a repeated clientOrderId places once, and
// the cloid on the wire is derived deterministically in the venue's format.
func TestHyperliquidClientOrderID(t *testing.T) {
	e := startHyperliquid(t)
	body := func() map[string]any {
		return map[string]any{"operation": "placeLimitOrder", "market": "ETH", "side": "BUY", "size": "0.01", "price": "2500", "clientOrderId": "my-order-1"}
	}
	first := e.do(body())
	n := len(e.sim.ReceivedOrders())
	second := e.do(body())
	if first["orderId"] != second["orderId"] || len(e.sim.ReceivedOrders()) != n {
		t.Fatalf("repeat placed again: %v then %v, %d wire orders", first, second, len(e.sim.ReceivedOrders()))
	}
	w := e.sim.ReceivedOrders()[n-1]
	if want := hyperliquid.Cloid(e.testCred, "my-order-1"); w.Cloid != want || !regexp.MustCompile(`^0x[0-9a-f]{32}$`).MatchString(w.Cloid) {
		t.Fatalf("cloid %q, want %q in 0x+32 hex", w.Cloid, want)
	}
	// Cancel by the clientOrderId: the connector cancels by cloid.
	e.do(map[string]any{"operation": "cancelOrder", "orderId": "my-order-1", "market": "ETH"})
	if os := objects(t, e.do(map[string]any{"operation": "getOrders"})["orders"]); len(os) != 0 {
		t.Fatalf("order left after cancel by cloid: %v", os)
	}
}

// TestHyperliquidNoncesUnderConcurrency: concurrent placements each get a
// distinct nonce the venue accepts.
func TestHyperliquidNoncesUnderConcurrency(t *testing.T) {
	e := startHyperliquid(t)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.call(e.Bootstrap().APIKey, map[string]any{"operation": "placeLimitOrder", "credentialId": e.testCred,
				"market": "ETH", "side": "BUY", "size": "0.01", "price": fmt.Sprint(2000 + i)})
			if r.status != http.StatusOK {
				errs <- string(r.raw)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Errorf("concurrent placement failed: %s", msg)
	}
	if got := e.sim.AcceptedNonces(hlAddress(t, hlTestAgentKey)); len(got) != n {
		t.Fatalf("%d nonces accepted, want %d distinct", len(got), n)
	}
}

// TestHyperliquidTestCredentialsWrongAgent: a key that is not the
// account's agent is valid:false, not an error.
func TestHyperliquidTestCredentialsWrongAgent(t *testing.T) {
	e := startHyperliquid(t)
	cases := map[string]string{
		"unknown key":              fmt.Sprintf(`{"accountAddress":%q,"agentPrivateKey":%q}`, hlTestAccount, hlStrangerKey),
		"agent of another account": fmt.Sprintf(`{"accountAddress":%q,"agentPrivateKey":%q}`, hlTestAccount, hlMainAgentKey),
	}
	for name, secret := range cases {
		t.Run(name, func(t *testing.T) {
			cred := e.newCredential(e.Bootstrap().AccountID, contract.Hyperliquid, contract.Testnet, secret)
			r := e.doWith(e.Bootstrap().APIKey, cred, map[string]any{"operation": "testCredentials"})
			if r["valid"] != false || r["exchange"] != "hyperliquid" {
				t.Fatalf("testCredentials: %v", r)
			}
			// Orders signed by it are refused upstream as the venue does.
			body := map[string]any{"operation": "placeLimitOrder", "credentialId": cred, "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000"}
			res := e.call(e.Bootstrap().APIKey, body)
			if res.status != http.StatusBadGateway || res.body["reason"] != "AUTHENTICATION_FAILED" {
				t.Fatalf("order with a foreign key: %d %s", res.status, res.raw)
			}
		})
	}
}
