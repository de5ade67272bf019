package standalone

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
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
	hlVault        = "0x1111111111111111111111111111111111111111"
	hlOtherVault   = "0x2222222222222222222222222222222222222222"
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
// The simulator's clock stands still, so prices only move when a test
// moves them and every answer can be compared with the paper engine's state.
type hlEnv struct {
	*testGateway
	sim                *sim.Sim
	now                time.Time
	testCred, mainCred string
	liveKey            string
}

func startHyperliquid(t *testing.T) *hlEnv {
	t.Helper()
	now := time.Now().Truncate(time.Second)
	s := sim.New(sim.Config{Seed: 7, Now: func() time.Time { return now }})
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
	e := &hlEnv{testGateway: g, sim: s, now: now}
	e.testCred = g.newCredential(g.Bootstrap().AccountID, contract.Hyperliquid, contract.Testnet, hlSecret(hlTestAccount, hlTestAgentKey, ""))
	e.mainCred = g.newCredential(g.Bootstrap().AccountID, contract.Hyperliquid, contract.Mainnet, hlSecret(hlMainAccount, hlMainAgentKey, ""))
	e.liveKey = g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive})
	return e
}

func hlSecret(account, key, vault string) string {
	if vault != "" {
		return fmt.Sprintf(`{"accountAddress":%q,"agentPrivateKey":%q,"vaultAddress":%q}`, account, key, vault)
	}
	return fmt.Sprintf(`{"accountAddress":%q,"agentPrivateKey":%q}`, account, key)
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

// lastAction returns the last action the simulator accepted.
func (e *hlEnv) lastAction() sim.Action {
	e.t.Helper()
	acts := e.sim.Actions()
	if len(acts) == 0 {
		e.t.Fatal("no action reached the simulator")
	}
	return acts[len(acts)-1]
}

// lastOrders returns the order action the simulator accepted last.
func (e *hlEnv) lastOrders() *hyperliquid.OrderAction {
	e.t.Helper()
	a, ok := e.lastAction().Action.(*hyperliquid.OrderAction)
	if !ok {
		e.t.Fatalf("last action is %T, want an order action", e.lastAction().Action)
	}
	return a
}

// eqDec requires a response field to be the decimal want.
func eqDec(t *testing.T, where string, got any, want decimal.Decimal) {
	t.Helper()
	if s, ok := got.(string); !ok || !decimal.RequireFromString(s).Equal(want) {
		t.Errorf("%s = %#v, want %s", where, got, want)
	}
}

// checkWire compares an order as it reached the venue.
func checkWire(t *testing.T, where string, got hyperliquid.OrderWire, want hyperliquid.OrderWire) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s on the wire:\n got  %s\n want %s", where, g, w)
	}
}

func limitType(tif string) hyperliquid.OrderType {
	return hyperliquid.OrderType{Limit: &hyperliquid.LimitType{TIF: tif}}
}

func triggerType(px, tpsl string) hyperliquid.OrderType {
	return hyperliquid.OrderType{Trigger: &hyperliquid.TriggerType{IsMarket: true, TriggerPx: px, Tpsl: tpsl}}
}

// TestHyperliquidAllOperations drives the 20 operations through the HTTP
// edge, NATS and the connector to the simulator, checking every SPEC §4
// field against the simulated venue's state, what went on the wire, and
// canonical markets.
func TestHyperliquidAllOperations(t *testing.T) {
	e := startHyperliquid(t)
	eng := e.sim.Engine()
	const btc = "BTC-USD-PERP"
	agent := hlAddress(t, hlTestAgentKey)
	cloid := func(r map[string]any) string { return hyperliquid.Cloid(e.testCred, r["clientOrderId"].(string)) }

	// Market data.
	book := e.do(map[string]any{"operation": "getOrderbook", "market": "BTC", "depth": 5})
	checkLevels(t, "bids", book["bids"], 5)
	checkLevels(t, "asks", book["asks"], 5)
	want, _ := eng.Orderbook("BTC", 5)
	for side, levels := range map[string][]paper.Level{"bids": want.Bids, "asks": want.Asks} {
		for i, l := range book[side].([]any) {
			pair := l.([]any)
			eqDec(t, fmt.Sprintf("%s[%d] price", side, i), pair[0], levels[i].Price)
			eqDec(t, fmt.Sprintf("%s[%d] size", side, i), pair[1], levels[i].Size)
		}
	}

	mark := e.do(map[string]any{"operation": "getMarkPrice", "market": "btc"})
	requireFields(t, "getMarkPrice", mark, map[string]kind{"markPrice": decStr, "indexPrice": decStr})
	prices, _ := eng.MarkPrice("BTC")
	eqDec(t, "markPrice", mark["markPrice"], prices.Mark)
	eqDec(t, "indexPrice (oracle)", mark["indexPrice"], prices.Index)

	cs := objects(t, e.do(map[string]any{"operation": "getCandles", "market": "BTC-PERP", "interval": "60", "limit": 10})["candles"])
	bars, _ := eng.Candles("BTC", 60, 10)
	if len(cs) != 10 || len(bars) != 10 {
		t.Fatalf("want 10 candles, got %d (engine %d)", len(cs), len(bars))
	}
	for i, c := range cs {
		requireFields(t, "candle", c, map[string]kind{"time": unixSec, "open": decStr, "high": decStr, "low": decStr, "close": decStr, "volume": decStr})
		if int64(c["time"].(float64)) != bars[i].Time.Unix() {
			t.Errorf("candle %d time %v, want %d", i, c["time"], bars[i].Time.Unix())
		}
		for f, v := range map[string]decimal.Decimal{"open": bars[i].Open, "high": bars[i].High, "low": bars[i].Low, "close": bars[i].Close, "volume": bars[i].Volume} {
			eqDec(t, fmt.Sprintf("candle %d %s", i, f), c[f], v)
		}
	}

	fr := e.do(map[string]any{"operation": "getFundingRate", "market": btc})
	requireFields(t, "getFundingRate", fr, map[string]kind{"fundingRate": decStr, "nextFundingTime": unixSec})
	funding, _ := eng.Funding("BTC")
	eqDec(t, "fundingRate", fr["fundingRate"], funding.Rate)
	if next, now := int64(fr["nextFundingTime"].(float64)), time.Now().Unix(); next%3600 != 0 || next <= now-5 || next > now+3600 {
		t.Errorf("nextFundingTime %d is not the next whole hour after %d (funding is hourly)", next, now)
	}

	symbols := map[string]bool{}
	for _, m := range objects(t, e.do(map[string]any{"operation": "getMarketsWithFunding"})["markets"]) {
		requireFields(t, "market", m, map[string]kind{"symbol": str, "markPrice": decStr, "fundingRate": decStr, "openInterest": decStr})
		sym := m["symbol"].(string)
		symbols[sym] = true
		native := map[string]string{"BTC-USD-PERP": "BTC", "ETH-USD-PERP": "ETH", "1000PEPE-USD-PERP": "kPEPE"}[sym]
		info, err := eng.Market(native)
		if err != nil {
			t.Errorf("getMarketsWithFunding lists %s, not canonical", sym)
			continue
		}
		eqDec(t, sym+" markPrice", m["markPrice"], info.MarkPrice)
		eqDec(t, sym+" fundingRate", m["fundingRate"], info.FundingRate)
		eqDec(t, sym+" openInterest", m["openInterest"], info.OpenInterest)
	}
	if len(symbols) != 3 {
		t.Errorf("getMarketsWithFunding: %v, want BTC-USD-PERP, ETH-USD-PERP, 1000PEPE-USD-PERP", symbols)
	}

	fees := e.do(map[string]any{"operation": "getFeeInfo", "market": btc})
	if fees["makerFee"] != "1.5" || fees["takerFee"] != "4.5" {
		t.Errorf("fees in bps: %v", fees)
	}

	// Account: read with the account address (the agent has no account,
	// so a read made with it would show 0).
	bal := e.do(map[string]any{"operation": "getBalance"})
	requireFields(t, "getBalance", bal, map[string]kind{"equity": decStr, "freeCollateral": decStr, "accountValue": decStr})
	if bal["exchange_type"] != "hyperliquid" || bal["equity"] != "100000" || bal["accountValue"] != "100000" || bal["freeCollateral"] != "100000" {
		t.Errorf("getBalance: %v", bal)
	}

	tc := e.do(map[string]any{"operation": "testCredentials"})
	if tc["valid"] != true || tc["exchange"] != "hyperliquid" {
		t.Errorf("testCredentials: %v", tc)
	}

	// Placement.
	lim := e.do(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "55000.04"})
	requireFields(t, "placeLimitOrder", lim, map[string]kind{"orderId": str, "market": str, "side": str, "size": decStr, "price": decStr, "status": str})
	if lim["market"] != btc || lim["side"] != "BUY" || lim["status"] != "OPEN" || lim["price"] != "55000" || lim["size"] != "0.01" {
		t.Errorf("placeLimitOrder: %v (price rounds down to 5 significant figures)", lim)
	}
	if a := e.lastAction(); a.Signer != agent || a.User != hlTestAccount || a.Mainnet {
		t.Errorf("order signed by %s for %s (mainnet=%v), want the agent for the account on testnet", a.Signer, a.User, a.Mainnet)
	}
	act := e.lastOrders()
	if act.Grouping != "na" || len(act.Orders) != 1 {
		t.Fatalf("limit order action: %+v", act)
	}
	checkWire(t, "limit order", act.Orders[0], hyperliquid.OrderWire{Asset: 0, IsBuy: true, Price: "55000", Size: "0.01", Type: limitType("Gtc"), Cloid: cloid(lim)})

	os := objects(t, e.do(map[string]any{"operation": "getOrders", "market": btc})["orders"])
	if len(os) != 1 {
		t.Fatalf("getOrders: %v", os)
	}
	requireFields(t, "order", os[0], map[string]kind{"id": str, "market": str, "side": str, "type": str, "size": decStr, "price": decStr, "filledSize": decStr, "status": str, "createdAt": unixSec})
	if os[0]["id"] != lim["orderId"] || os[0]["market"] != btc || os[0]["side"] != "BUY" || os[0]["type"] != "LIMIT" || os[0]["size"] != "0.01" ||
		os[0]["price"] != "55000" || os[0]["filledSize"] != "0" || os[0]["status"] != "OPEN" || int64(os[0]["createdAt"].(float64)) != e.now.Unix() {
		t.Errorf("order: %v", os[0])
	}
	// No market: the connector finds the order's coin with orderStatus,
	// then cancels by oid.
	if r := e.do(map[string]any{"operation": "cancelOrder", "orderId": lim["orderId"]}); len(r) != 1 {
		t.Errorf("cancelOrder returns success only: %v", r)
	}
	if c, ok := e.lastAction().Action.(*hyperliquid.CancelAction); !ok || len(c.Cancels) != 1 || c.Cancels[0].Asset != 0 || fmt.Sprint(c.Cancels[0].Oid) != lim["orderId"] {
		t.Errorf("cancel by oid on the wire: %+v", e.lastAction().Action)
	}

	mkt := e.do(map[string]any{"operation": "placeMarketOrder", "market": btc, "side": "BUY", "size": "0.01"})
	requireFields(t, "placeMarketOrder", mkt, map[string]kind{"orderId": str, "filledPrice": decStr, "filledSize": decStr, "fee": decStr})
	fills, _ := eng.Fills(hlTestAccount, "BTC", 10)
	if len(fills) == 0 || fills[0].OrderID != mkt["orderId"] {
		t.Fatalf("engine fills %+v, want the market order's", fills)
	}
	var feeSum, notional decimal.Decimal
	for _, f := range fills {
		if f.OrderID == mkt["orderId"] {
			feeSum, notional = feeSum.Add(f.Fee), notional.Add(f.Price.Mul(f.Size))
		}
	}
	eqDec(t, "filledSize", mkt["filledSize"], decimal.RequireFromString("0.01"))
	eqDec(t, "filledPrice", mkt["filledPrice"], notional.Div(decimal.RequireFromString("0.01")))
	eqDec(t, "fee (from the order's fills)", mkt["fee"], feeSum)
	if !feeSum.IsPositive() {
		t.Errorf("market order fee %s", feeSum)
	}
	mid := prices.Mark // the book is symmetric around mark
	checkWire(t, "market order", e.lastOrders().Orders[0], hyperliquid.OrderWire{Asset: 0, IsBuy: true,
		Price: mid.Mul(decimal.RequireFromString("1.05")).RoundFloor(0).String(), Size: "0.01", Type: limitType("Ioc"), Cloid: cloid(mkt)})

	ps := objects(t, e.do(map[string]any{"operation": "getPositions"})["positions"])
	if len(ps) != 1 {
		t.Fatalf("getPositions: %v", ps)
	}
	requireFields(t, "position", ps[0], map[string]kind{"market": str, "side": str, "size": decStr, "entryPrice": decStr, "markPrice": decStr, "unrealizedPnl": decStr, "leverage": decStr})
	pos, _ := eng.Positions(hlTestAccount, "BTC")
	if ps[0]["market"] != btc || ps[0]["side"] != "LONG" || ps[0]["size"] != "0.01" || len(pos) != 1 {
		t.Errorf("position: %v", ps[0])
	}
	eqDec(t, "entryPrice", ps[0]["entryPrice"], pos[0].EntryPrice)
	eqDec(t, "position markPrice", ps[0]["markPrice"], pos[0].MarkPrice)
	eqDec(t, "unrealizedPnl", ps[0]["unrealizedPnl"], pos[0].UnrealizedPnL)
	eqDec(t, "leverage", ps[0]["leverage"], decimal.NewFromInt(int64(pos[0].Leverage)))

	fs := objects(t, e.do(map[string]any{"operation": "getFills", "market": btc})["fills"])
	if len(fs) != len(fills) {
		t.Fatalf("getFills %d, engine %d", len(fs), len(fills))
	}
	for i, f := range fs {
		requireFields(t, "fill", f, map[string]kind{"id": str, "market": str, "side": str, "size": decStr, "price": decStr, "fee": decStr, "timestamp": unixSec})
		if f["id"] != fills[i].ID || f["market"] != btc || f["side"] != "BUY" || int64(f["timestamp"].(float64)) != e.now.Unix() {
			t.Errorf("fill %d: %v", i, f)
		}
		eqDec(t, "fill size", f["size"], fills[i].Size)
		eqDec(t, "fill price", f["price"], fills[i].Price)
		eqDec(t, "fill fee", f["fee"], fills[i].Fee)
	}

	// A stop is a market trigger order on mark, reduce-only by default;
	// its worst price is 10% beyond the trigger.
	stop := e.do(map[string]any{"operation": "placeStopOrder", "market": btc, "side": "SELL", "size": "0.01", "triggerPrice": "50000"})
	requireFields(t, "placeStopOrder", stop, map[string]kind{"orderId": str, "status": str, "triggerPrice": decStr})
	if stop["status"] != "PENDING" || stop["triggerPrice"] != "50000" {
		t.Errorf("placeStopOrder: %v", stop)
	}
	checkWire(t, "stop", e.lastOrders().Orders[0], hyperliquid.OrderWire{Asset: 0, IsBuy: false, Price: "45000", Size: "0.01", ReduceOnly: true,
		Type: triggerType("50000", "sl"), Cloid: cloid(stop)})
	var listed map[string]any
	for _, o := range objects(t, e.do(map[string]any{"operation": "getOrders", "market": btc})["orders"]) {
		if o["id"] == stop["orderId"] {
			listed = o
		}
	}
	if listed == nil || listed["status"] != "PENDING" || listed["type"] != "STOP_MARKET" || listed["triggerPrice"] != "50000" || listed["reduceOnly"] != true {
		t.Errorf("stop in getOrders: %v", listed)
	}

	// Protection: both legs in one action grouped positionTpsl.
	prot := e.do(map[string]any{"operation": "placeProtectionOrders", "market": btc, "side": "LONG", "size": "0.01", "entryPrice": "60000", "tpPercent": 10, "slPercent": 10})
	requireFields(t, "placeProtectionOrders", prot, map[string]kind{"tpOrderId": str, "slOrderId": str})
	// The venue acknowledges position TP/SL legs with "waitingForTrigger"
	// and no oid: the ids are resolved by cloid, and are the listed orders.
	open := map[any]bool{}
	for _, o := range objects(t, e.do(map[string]any{"operation": "getOrders", "market": btc})["orders"]) {
		open[o["id"]] = o["status"] == "PENDING"
	}
	for _, leg := range []string{"tpOrderId", "slOrderId"} {
		if id, _ := prot[leg].(string); id == "" || !open[id] {
			t.Errorf("%s = %q, want the id of a pending order (open orders: %v)", leg, id, open)
		}
	}
	pa := e.lastOrders()
	if pa.Grouping != "positionTpsl" || len(pa.Orders) != 2 {
		t.Fatalf("protection action: grouping %q with %d orders, want positionTpsl with 2", pa.Grouping, len(pa.Orders))
	}
	checkWire(t, "take profit", withoutCloid(pa.Orders[0]), hyperliquid.OrderWire{Asset: 0, IsBuy: false, Price: "59400", Size: "0.01", ReduceOnly: true, Type: triggerType("66000", "tp")})
	checkWire(t, "stop loss", withoutCloid(pa.Orders[1]), hyperliquid.OrderWire{Asset: 0, IsBuy: false, Price: "48600", Size: "0.01", ReduceOnly: true, Type: triggerType("54000", "sl")})
	if pa.Orders[0].Cloid == pa.Orders[1].Cloid || !regexp.MustCompile(`^0x[0-9a-f]{32}$`).MatchString(pa.Orders[0].Cloid) {
		t.Errorf("protection legs need distinct cloids: %q %q", pa.Orders[0].Cloid, pa.Orders[1].Cloid)
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
	ba := e.lastOrders()
	if ba.Grouping != "na" || len(ba.Orders) != 2 || ba.Orders[0].Asset != 0 || ba.Orders[1].Asset != 1 || results[0]["orderId"] == results[1]["orderId"] {
		t.Errorf("batch: one action with both orders: %+v, results %v", ba, results)
	}

	// BTC: the stop, both protection legs and one batch order, in one
	// cancel action.
	if n := e.do(map[string]any{"operation": "cancelAllOrders", "market": btc})["cancelledCount"]; n != float64(4) {
		t.Errorf("cancelAllOrders: cancelledCount %v, want 4", n)
	}
	if c, ok := e.lastAction().Action.(*hyperliquid.CancelAction); !ok || len(c.Cancels) != 4 {
		t.Errorf("cancel-all on the wire: %+v", e.lastAction().Action)
	}
	if os := objects(t, e.do(map[string]any{"operation": "getOrders"})["orders"]); len(os) != 1 || os[0]["market"] != "ETH-USD-PERP" {
		t.Errorf("after cancelAllOrders BTC only the ETH order stays: %v", os)
	}
	sent := len(e.sim.Actions())
	if n := e.do(map[string]any{"operation": "cancelAllOrders", "market": btc})["cancelledCount"]; n != float64(0) || len(e.sim.Actions()) != sent {
		t.Errorf("cancelAllOrders with nothing open: %v, %d actions sent", n, len(e.sim.Actions())-sent)
	}

	closed := e.do(map[string]any{"operation": "closeAllPositions", "market": btc})
	requireFields(t, "closeAllPositions", closed, map[string]kind{"closedSize": decStr, "avgClosePrice": decStr})
	closeFills, _ := eng.Fills(hlTestAccount, "BTC", 1)
	if closed["closedSize"] != "0.01" || len(closeFills) != 1 || closeFills[0].Side != paper.Sell {
		t.Errorf("closeAllPositions: %v", closed)
	}
	eqDec(t, "avgClosePrice", closed["avgClosePrice"], closeFills[0].Price)
	checkWire(t, "close-all", withoutCloid(e.lastOrders().Orders[0]), hyperliquid.OrderWire{Asset: 0, IsBuy: false,
		Price: mid.Mul(decimal.RequireFromString("0.95")).RoundCeil(0).String(), Size: "0.01", ReduceOnly: true, Type: limitType("Ioc")})
	if ps := objects(t, e.do(map[string]any{"operation": "getPositions", "market": btc})["positions"]); len(ps) != 0 {
		t.Errorf("position left after closeAllPositions: %v", ps)
	}

	lev := e.do(map[string]any{"operation": "setLeverage", "market": btc, "leverage": 5})
	requireFields(t, "setLeverage", lev, map[string]kind{"leverage": integer})
	if lev["leverage"] != float64(5) {
		t.Errorf("setLeverage: %v", lev)
	}
	if u, ok := e.lastAction().Action.(*hyperliquid.UpdateLeverageAction); !ok || *u != (hyperliquid.UpdateLeverageAction{Type: "updateLeverage", Asset: 0, IsCross: true, Leverage: 5}) {
		t.Errorf("setLeverage on the wire: %+v", e.lastAction().Action)
	}
	if l, _ := eng.Leverage(hlTestAccount, "BTC"); l != 5 {
		t.Errorf("venue leverage %d, want 5", l)
	}
	r := e.call(e.Bootstrap().APIKey, map[string]any{"operation": "setLeverage", "credentialId": e.testCred, "market": btc, "leverage": 41})
	if r.status != http.StatusBadRequest || r.code() != "INVALID_REQUEST" || !strings.Contains(string(r.raw), "maximum 40") {
		t.Errorf("leverage above the market's maximum: %d %s", r.status, r.raw)
	}

	t.Run("multiplier listing both ways", func(t *testing.T) {
		for _, m := range []string{"kPEPE", "1000PEPE", "1000PEPE-USD-PERP", "1000PEPE-PERP"} {
			requireFields(t, m, e.do(map[string]any{"operation": "getMarkPrice", "market": m}), map[string]kind{"markPrice": decStr})
		}
		p := e.do(map[string]any{"operation": "placeLimitOrder", "market": "1000PEPE", "side": "BUY", "size": "1000", "price": "0.011"})
		if p["market"] != "1000PEPE-USD-PERP" {
			t.Errorf("placeLimitOrder market %v", p["market"])
		}
		if w := e.lastOrders().Orders[0]; w.Asset != 2 || w.Price != "0.011" || w.Size != "1000" {
			t.Errorf("kPEPE order on the wire: %+v", w)
		}
		os := objects(t, e.do(map[string]any{"operation": "getOrders", "market": "kPEPE"})["orders"])
		if len(os) != 1 || os[0]["market"] != "1000PEPE-USD-PERP" {
			t.Errorf("getOrders kPEPE: %v", os)
		}
		e.do(map[string]any{"operation": "placeMarketOrder", "market": "kPEPE", "side": "BUY", "size": "1000"})
		ps := objects(t, e.do(map[string]any{"operation": "getPositions", "market": "1000PEPE-USD-PERP"})["positions"])
		fs := objects(t, e.do(map[string]any{"operation": "getFills", "market": "kPEPE"})["fills"])
		if len(ps) != 1 || ps[0]["market"] != "1000PEPE-USD-PERP" || len(fs) == 0 || fs[0]["market"] != "1000PEPE-USD-PERP" {
			t.Errorf("kPEPE position %v, fills %v", ps, fs)
		}
		if c := e.do(map[string]any{"operation": "closeAllPositions", "market": "1000PEPE"}); c["closedSize"] != "1000" {
			t.Errorf("close kPEPE: %v", c)
		}
		e.do(map[string]any{"operation": "cancelAllOrders", "market": "kPEPE"})
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
		if a := e.lastAction(); !a.Mainnet || a.User != hlMainAccount || a.Signer != hlAddress(t, hlMainAgentKey) {
			t.Errorf("mainnet order accepted as %+v", a)
		}
		e.doWith(e.liveKey, e.mainCred, map[string]any{"operation": "cancelOrder", "orderId": p["orderId"], "market": btc})
	})

	// Everything above logged at debug level: no agent key appears.
	logs := strings.ToLower(e.logs.String())
	for _, k := range []string{hlTestAgentKey, hlMainAgentKey} {
		if strings.Contains(logs, strings.TrimPrefix(strings.ToLower(k), "0x")) {
			t.Errorf("an agent private key appears in the logs")
		}
	}
	if !strings.Contains(logs, "placelimitorder") {
		t.Errorf("the run logged no requests: the secret search proves nothing")
	}
}

func withoutCloid(w hyperliquid.OrderWire) hyperliquid.OrderWire {
	w.Cloid = ""
	return w
}

// TestHyperliquidPriceFormatting: prices reach the venue with at most 5
// significant figures (integers exempt) and 6 − szDecimals decimals, buys
// rounded down and sells up, sizes down to szDecimals, no trailing zeros;
// the response reports what was submitted. BTC has szDecimals 5, ETH 4,
// kPEPE 0.
func TestHyperliquidPriceFormatting(t *testing.T) {
	e := startHyperliquid(t)
	tests := []struct {
		name, market, side, size, price string
		wantPrice, wantSize             string
	}{
		{"5 significant figures, buy down", "BTC", "BUY", "0.001", "55000.04", "55000", "0.001"},
		{"very large price: integers are exempt", "BTC", "SELL", "0.001", "123456.78", "123457", "0.001"},
		{"szDecimals 5 leaves 1 decimal", "BTC", "BUY", "0.00123456", "9999.95", "9999.9", "0.00123"},
		{"5 significant figures bind before 2 decimals", "ETH", "BUY", "0.01", "2345.678", "2345.6", "0.01"},
		{"sell rounds up", "ETH", "SELL", "0.01", "3456.7891", "3456.8", "0.01"},
		{"trailing zeros dropped", "ETH", "BUY", "0.0100", "2500.000", "2500", "0.01"},
		{"very small price, 5 figures", "kPEPE", "BUY", "1000", "0.01123456", "0.011234", "1000"},
		{"very small price, 6 decimals bind", "kPEPE", "BUY", "10000", "0.0012345678", "0.001234", "10000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(map[string]any{"operation": "placeLimitOrder", "market": tc.market, "side": tc.side, "size": tc.size, "price": tc.price})
			w := e.lastOrders().Orders[0]
			if r["price"] != tc.wantPrice || r["size"] != tc.wantSize || w.Price != tc.wantPrice || w.Size != tc.wantSize || r["status"] != "OPEN" {
				t.Errorf("%s %s @ %s: answered %s @ %s (%v), wire %s @ %s; want %s @ %s",
					tc.size, tc.market, tc.price, r["size"], r["price"], r["status"], w.Size, w.Price, tc.wantSize, tc.wantPrice)
			}
		})
	}
	t.Run("minimum value checked after rounding", func(t *testing.T) {
		// 0.00011 × 90909.1 = 10.000001 passes on the tick, but the venue
		// would get 90909 (5 significant figures): 9.99999 < $10.
		sent := e.sim.ExchangeRequests()
		r := e.call(e.Bootstrap().APIKey, map[string]any{"operation": "placeLimitOrder", "credentialId": e.testCred,
			"market": "BTC", "side": "BUY", "size": "0.00011", "price": "90909.1"})
		if r.status != http.StatusBadRequest || r.code() != "INVALID_REQUEST" || !strings.Contains(string(r.raw), "minimum notional") || e.sim.ExchangeRequests() != sent {
			t.Fatalf("want 400 INVALID_REQUEST naming the minimum notional and nothing sent, got %d %s", r.status, r.raw)
		}
	})
	e.do(map[string]any{"operation": "cancelAllOrders", "market": "BTC"})
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
		{"protection on the wrong side of mark", map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "SHORT", "size": "0.01", "entryPrice": "30000", "tpPercent": 10}, contract.ReasonInvalidOrder},
		{"cancel of an unknown order", map[string]any{"operation": "cancelOrder", "market": "BTC", "orderId": "123456"}, contract.ReasonOrderNotFound},
		{"cancel of an unknown cloid", map[string]any{"operation": "cancelOrder", "market": "BTC", "orderId": "0x0000000000000000000000000000beef"}, contract.ReasonOrderNotFound},
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
		if res[0]["status"] != "OPEN" || res[1]["status"] != "REJECTED" || errObj["reason"] != "POST_ONLY_REJECTED" ||
			!strings.Contains(fmt.Sprint(errObj["exchangeMessage"]), "Post only order would have immediately matched") {
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
	mid := decimal.RequireFromString("61234.5") // the book is symmetric around mark
	for _, tc := range []struct{ side, want string }{
		{"BUY", "64296"},  // 64296.225 rounded down: never above mid × 1.05
		{"SELL", "58173"}, // 58172.775 rounded up: never below mid × 0.95
	} {
		e.do(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": tc.side, "size": "0.01"})
		o := e.lastOrders().Orders[0]
		if o.Type.Limit == nil || o.Type.Limit.TIF != "Ioc" || o.Price != tc.want {
			t.Errorf("%s: wire order %+v: want an IOC limit at %s, the 5%% bound from mid %s at 5 significant figures", tc.side, o, tc.want, mid)
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
	n := len(e.sim.Actions())
	second := e.do(body())
	if first["orderId"] != second["orderId"] || len(e.sim.Actions()) != n {
		t.Fatalf("repeat placed again: %v then %v, %d actions", first, second, len(e.sim.Actions()))
	}
	w := e.lastOrders().Orders[0]
	if want := hyperliquid.Cloid(e.testCred, "my-order-1"); w.Cloid != want || !regexp.MustCompile(`^0x[0-9a-f]{32}$`).MatchString(w.Cloid) {
		t.Fatalf("cloid %q, want %q in 0x+32 hex", w.Cloid, want)
	}
	// Cancel by the clientOrderId: the connector cancels by cloid.
	e.do(map[string]any{"operation": "cancelOrder", "orderId": "my-order-1", "market": "ETH"})
	if c, ok := e.lastAction().Action.(*hyperliquid.CancelByCloidAction); !ok || len(c.Cancels) != 1 || c.Cancels[0].Cloid != w.Cloid || c.Cancels[0].Asset != 1 {
		t.Fatalf("cancel by cloid on the wire: %+v", e.lastAction().Action)
	}
	if os := objects(t, e.do(map[string]any{"operation": "getOrders"})["orders"]); len(os) != 0 {
		t.Fatalf("order left after cancel by cloid: %v", os)
	}
	// A clientOrderId that already is a cloid goes on the wire as is, and
	// cancels by it without a market.
	e.do(map[string]any{"operation": "placeLimitOrder", "market": "ETH", "side": "BUY", "size": "0.01", "price": "2400", "clientOrderId": "0x0000000000000000000000000000C10D"})
	if w := e.lastOrders().Orders[0]; w.Cloid != "0x0000000000000000000000000000c10d" {
		t.Fatalf("cloid %q", w.Cloid)
	}
	e.do(map[string]any{"operation": "cancelOrder", "orderId": "0x0000000000000000000000000000c10d"})
	if os := objects(t, e.do(map[string]any{"operation": "getOrders"})["orders"]); len(os) != 0 {
		t.Fatalf("order left after cancel by cloid: %v", os)
	}
}

// TestHyperliquidNoncesUnderConcurrency: concurrent placements each get a
// distinct nonce the venue accepts on first try.
func TestHyperliquidNoncesUnderConcurrency(t *testing.T) {
	e := startHyperliquid(t)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan string, n)
	sent := e.sim.ExchangeRequests()
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
	if got := e.sim.ExchangeRequests() - sent; got != n {
		t.Fatalf("%d actions sent for %d placements: some nonce was refused", got, n)
	}
}

// TestHyperliquidTestCredentialsWrongAgent: a key that is not the
// account's agent is valid:false, not an error; the simulator knows which
// agents each account approved.
func TestHyperliquidTestCredentialsWrongAgent(t *testing.T) {
	e := startHyperliquid(t)
	userKey := "0x" + strings.Repeat("11", 32)
	if err := e.sim.AddUser(hlAddress(t, userKey), decimal.NewFromInt(100000)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, secret string
		// orderRefused: the venue refuses actions it signs. An account's
		// own key signs for that account, so the venue takes its orders
		// for the wrong account: testCredentials is what catches it.
		orderRefused bool
		key          string
	}{
		{"unknown key", hlSecret(hlTestAccount, hlStrangerKey, ""), true, hlStrangerKey},
		{"agent of another account", hlSecret(hlTestAccount, hlMainAgentKey, ""), true, hlMainAgentKey},
		{"another account's own key", hlSecret(hlTestAccount, userKey, ""), false, userKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cred := e.newCredential(e.Bootstrap().AccountID, contract.Hyperliquid, contract.Testnet, tc.secret)
			r := e.doWith(e.Bootstrap().APIKey, cred, map[string]any{"operation": "testCredentials"})
			wantRejected(t, r, contract.Hyperliquid, strings.TrimPrefix(tc.key, "0x"))
			if !tc.orderRefused {
				return
			}
			// Orders signed by it are refused upstream as the venue does.
			body := map[string]any{"operation": "placeLimitOrder", "credentialId": cred, "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000"}
			res := e.call(e.Bootstrap().APIKey, body)
			if res.status != http.StatusBadGateway || res.body["reason"] != "AUTHENTICATION_FAILED" || !strings.Contains(string(res.raw), "does not exist") {
				t.Fatalf("order with a foreign key: %d %s", res.status, res.raw)
			}
		})
	}
	t.Run("the account's own key", func(t *testing.T) {
		cred := e.newCredential(e.Bootstrap().AccountID, contract.Hyperliquid, contract.Testnet, hlSecret(hlAddress(t, userKey), userKey, ""))
		if r := e.doWith(e.Bootstrap().APIKey, cred, map[string]any{"operation": "testCredentials"}); r["valid"] != true {
			t.Fatalf("testCredentials with the master's own key: %v", r)
		}
	})
}

// TestHyperliquidVault: with vaultAddress the agent trades for the vault
// (or sub-account): the vault enters the signed hash and the body, reads
// use the vault's address, and a vault the account does not lead is refused.
func TestHyperliquidVault(t *testing.T) {
	e := startHyperliquid(t)
	if err := e.sim.AddVault(hlVault, hlTestAccount, decimal.NewFromInt(50000)); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.AddVault(hlOtherVault, hlMainAccount, decimal.NewFromInt(50000)); err != nil {
		t.Fatal(err)
	}
	cred := e.newCredential(e.Bootstrap().AccountID, contract.Hyperliquid, contract.Testnet, hlSecret(hlTestAccount, hlTestAgentKey, hlVault))
	key := e.Bootstrap().APIKey
	if r := e.doWith(key, cred, map[string]any{"operation": "testCredentials"}); r["valid"] != true {
		t.Fatalf("testCredentials: %v", r)
	}
	if b := e.doWith(key, cred, map[string]any{"operation": "getBalance"}); b["equity"] != "50000" {
		t.Fatalf("vault balance: %v (reads must use the vault's address)", b)
	}
	p := e.doWith(key, cred, map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000"})
	if a := e.lastAction(); a.User != hlVault || a.Signer != hlAddress(t, hlTestAgentKey) {
		t.Fatalf("vault order accepted as %+v", a)
	}
	if os := objects(t, e.doWith(key, cred, map[string]any{"operation": "getOrders"})["orders"]); len(os) != 1 || os[0]["id"] != p["orderId"] {
		t.Fatalf("vault orders: %v", os)
	}
	if os := objects(t, e.do(map[string]any{"operation": "getOrders"})["orders"]); len(os) != 0 {
		t.Fatalf("the order belongs to the vault, not the account: %v", os)
	}
	e.doWith(key, cred, map[string]any{"operation": "cancelAllOrders", "market": "BTC"})

	other := e.newCredential(e.Bootstrap().AccountID, contract.Hyperliquid, contract.Testnet, hlSecret(hlTestAccount, hlTestAgentKey, hlOtherVault))
	r := e.call(key, map[string]any{"operation": "placeLimitOrder", "credentialId": other, "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000"})
	if r.status != http.StatusBadGateway || r.body["reason"] != "AUTHENTICATION_FAILED" {
		t.Fatalf("order for a vault led by another account: %d %s", r.status, r.raw)
	}
}

// TestHyperliquidStopTriggersOnMark: the stop rests until the mark price
// reaches its trigger, then closes the position.
func TestHyperliquidStopTriggersOnMark(t *testing.T) {
	e := startHyperliquid(t)
	e.do(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"})
	stop := e.do(map[string]any{"operation": "placeStopOrder", "market": "BTC", "side": "SELL", "size": "0.01", "triggerPrice": "57000"})
	if _, err := e.sim.Engine().SetMarkPrice("BTC", decimal.RequireFromString("57100")); err != nil {
		t.Fatal(err)
	}
	if os := objects(t, e.do(map[string]any{"operation": "getOrders"})["orders"]); len(os) != 1 || os[0]["id"] != stop["orderId"] {
		t.Fatalf("mark above the trigger: the stop waits: %v", os)
	}
	if _, err := e.sim.Engine().SetMarkPrice("BTC", decimal.RequireFromString("56900")); err != nil {
		t.Fatal(err)
	}
	if os := objects(t, e.do(map[string]any{"operation": "getOrders"})["orders"]); len(os) != 0 {
		t.Fatalf("mark through the trigger: the stop fired: %v", os)
	}
	if ps := objects(t, e.do(map[string]any{"operation": "getPositions"})["positions"]); len(ps) != 0 {
		t.Fatalf("the stop closed the position: %v", ps)
	}
}

// TestHyperliquidHalfBracketRolledBack: when the venue takes the TP leg
// (acknowledged "waitingForTrigger", no oid) and refuses the SL leg, the
// TP leg is cancelled by its cloid: no half bracket is left behind.
func TestHyperliquidHalfBracketRolledBack(t *testing.T) {
	e := startHyperliquid(t)
	e.do(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"})
	// An SL above the mark of a long would trigger at once: the venue refuses that leg.
	body := map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.01",
		"entryPrice": "80000", "tpPercent": 50, "slPercent": 1}
	body["credentialId"] = e.testCred
	if r := e.call(e.Bootstrap().APIKey, body); r.status == http.StatusOK {
		t.Fatalf("half-refused bracket answered success: %s", r.raw)
	}
	if _, ok := e.lastAction().Action.(*hyperliquid.CancelByCloidAction); !ok {
		t.Fatalf("last action %T, want the TP leg cancelled by cloid", e.lastAction().Action)
	}
	if os := objects(t, e.do(map[string]any{"operation": "getOrders", "market": "BTC"})["orders"]); len(os) != 0 {
		t.Fatalf("orders left behind: %v", os)
	}
}
