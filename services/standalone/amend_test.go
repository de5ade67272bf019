package standalone

import (
	"net/http"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	astersim "github.com/perpgate/perpgate/services/connectors/aster/sim"
	binancesim "github.com/perpgate/perpgate/services/connectors/binance/sim"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	hl "github.com/perpgate/perpgate/services/connectors/hyperliquid"
	okxsim "github.com/perpgate/perpgate/services/connectors/okx/sim"
	paradexsim "github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// venueCall is one venue of the modifyOrder and setDeadManSwitch
// acceptance: a gateway, the key and credential to call with and a market.
type venueCall struct {
	g      *testGateway
	key    string
	cred   string
	market string
	size   string // a size the venue takes
	// native is the mode setDeadManSwitch answers for a market-wide
	// switch and one over every market.
	nativeMarket, nativeAll bool
}

func (v venueCall) do(body map[string]any) response {
	v.g.t.Helper()
	body["credentialId"] = v.cred
	return v.g.call(v.key, body)
}

func (v venueCall) ok(body map[string]any) map[string]any {
	v.g.t.Helper()
	r := v.do(body)
	if r.status != http.StatusOK || r.body["success"] != true {
		v.g.t.Fatalf("%v: status %d body %s", body["operation"], r.status, r.raw)
	}
	return r.body
}

// openOrder is the order id among getOrders, or nil.
func (v venueCall) openOrder(id string) map[string]any {
	v.g.t.Helper()
	for _, o := range objects(v.g.t, v.ok(map[string]any{"operation": "getOrders", "market": v.market})["orders"]) {
		if o["id"] == id {
			return o
		}
	}
	return nil
}

// checkModifyOrder places a resting buy, amends it through /v1 (dry run,
// by orderId, a repeat, by clientOrderId) and MCP, and checks what the
// venue then lists; a trigger price on a limit order is refused naming it.
func checkModifyOrder(t *testing.T, v venueCall) {
	d := decimal.RequireFromString
	mark := d(v.ok(map[string]any{"operation": "getMarkPrice", "market": v.market})["markPrice"].(string))
	p1, p2, p3 := mark.Mul(d("0.8")).Round(0), mark.Mul(d("0.79")).Round(0), mark.Mul(d("0.78")).Round(0)
	size := d(v.size)
	placed := v.ok(map[string]any{"operation": "placeLimitOrder", "market": v.market, "side": "BUY", "size": v.size,
		"price": p1.String(), "clientOrderId": "amend-1"})
	id := placed["orderId"].(string)

	dry := v.ok(map[string]any{"operation": "modifyOrder", "orderId": id, "market": v.market, "price": p2.String(), "dryRun": true})
	if dry["dryRun"] != true || !d(dry["price"].(string)).Equal(p2) {
		t.Fatalf("dry run answered %v", dry)
	}
	if o := v.openOrder(id); o == nil || !d(o["price"].(string)).Equal(p1) {
		t.Fatalf("a dry run changed the order: %v", o)
	}

	got := v.ok(map[string]any{"operation": "modifyOrder", "orderId": id, "market": v.market, "price": p2.String(), "size": size.Mul(d("2")).String()})
	if got["id"] != id || !d(got["price"].(string)).Equal(p2) || !d(got["size"].(string)).Equal(size.Mul(d("2"))) {
		t.Fatalf("modifyOrder answered %v, want id %s price %s size %s", got, id, p2, size.Mul(d("2")))
	}
	o := v.openOrder(id)
	if o == nil || !d(o["price"].(string)).Equal(p2) || !d(o["size"].(string)).Equal(size.Mul(d("2"))) {
		t.Fatalf("the venue lists %v after the amend", o)
	}
	again := v.ok(map[string]any{"operation": "modifyOrder", "orderId": id, "market": v.market, "price": p2.String(), "size": size.Mul(d("2")).String()})
	if again["id"] != id || !d(again["price"].(string)).Equal(p2) {
		t.Fatalf("a repeated modify answered %v", again)
	}
	byClient := v.ok(map[string]any{"operation": "modifyOrder", "clientOrderId": "amend-1", "market": v.market, "price": p3.String()})
	if !d(byClient["price"].(string)).Equal(p3) {
		t.Fatalf("modify by clientOrderId answered %v", byClient)
	}
	r := v.do(map[string]any{"operation": "modifyOrder", "orderId": id, "market": v.market, "triggerPrice": p3.String()})
	if r.status != http.StatusBadRequest || r.code() != string(contract.CodeInvalidRequest) || !contains(r.body["error"].(string), "triggerPrice") {
		t.Fatalf("triggerPrice on a limit order: %d %s", r.status, r.raw)
	}

	c := mustConnectMCP(t, v.g, "streamable", v.key)
	viaMCP := c.ok("modify_order", map[string]any{"credentialId": v.cred, "orderId": id, "market": v.market, "price": p2.String()})
	if viaMCP["id"] != id || !d(viaMCP["price"].(string)).Equal(p2) {
		t.Fatalf("modify_order answered %v", viaMCP)
	}
	if o := v.openOrder(id); o == nil || !d(o["price"].(string)).Equal(p2) {
		t.Fatalf("the venue lists %v after modify_order", o)
	}
	v.ok(map[string]any{"operation": "cancelOrder", "orderId": id, "market": v.market})
}

// checkDeadManSwitch arms, renews and turns off the switch through /v1
// and MCP, for one market and for every market, and checks the mode.
func checkDeadManSwitch(t *testing.T, v venueCall) {
	mode := func(native bool) string {
		if native {
			return contract.DeadManNative
		}
		return contract.DeadManEmulated
	}
	c := mustConnectMCP(t, v.g, "streamable", v.key)
	for _, tc := range []struct {
		args   map[string]any
		native bool
	}{
		{map[string]any{"market": v.market}, v.nativeMarket},
		{map[string]any{}, v.nativeAll},
	} {
		arm := map[string]any{"credentialId": v.cred, "timeoutSeconds": 60}
		off := map[string]any{"operation": "setDeadManSwitch", "timeoutSeconds": 0}
		for k, val := range tc.args {
			arm[k], off[k] = val, val
		}
		got := c.ok("set_dead_man_switch", arm)
		now := time.Now().Unix()
		dl, _ := got["deadline"].(float64)
		if got["mode"] != mode(tc.native) || int64(dl) < now+55 || int64(dl) > now+65 {
			t.Fatalf("set_dead_man_switch %v answered %v, want mode %s and a deadline 60 s from %d", tc.args, got, mode(tc.native), now)
		}
		if res := v.ok(off); res["mode"] != mode(tc.native) || res["deadline"] != float64(0) {
			t.Fatalf("setDeadManSwitch 0 %v answered %v", tc.args, res)
		}
	}
	r := v.do(map[string]any{"operation": "setDeadManSwitch", "timeoutSeconds": 3})
	if r.status != http.StatusBadRequest || !contains(r.body["error"].(string), "timeoutSeconds") {
		t.Fatalf("timeoutSeconds 3: %d %s", r.status, r.raw)
	}
}

// TestPaperModifyOrder: modifyOrder and setDeadManSwitch on the paper
// exchange, through /v1 and MCP.
func TestPaperModifyOrder(t *testing.T) {
	g := startGateway(t)
	v := venueCall{g: g, key: g.Bootstrap().APIKey, cred: g.Bootstrap().CredentialID, market: "BTC-USD-PERP", size: "0.01"}
	checkModifyOrder(t, v)
	checkDeadManSwitch(t, v)
	checkModifyStop(t, v)
}

// TestBinanceModifyOrder: Modify Order and countdownCancelAll (per
// symbol, so native only with a market) on the Binance simulator.
func TestBinanceModifyOrder(t *testing.T) {
	b := startBinance(t, binancesim.Config{})
	v := venueCall{g: b.testGateway, key: b.live, cred: b.mainCred, market: "BTC-USDT-PERP", size: "0.01", nativeMarket: true}
	checkModifyOrder(t, v)
	checkDeadManSwitch(t, v)

	// Binance's conditional orders have no modify: no silent cancel and replace.
	mark := decimal.RequireFromString(v.ok(map[string]any{"operation": "getMarkPrice", "market": v.market})["markPrice"].(string))
	stop := v.ok(map[string]any{"operation": "placeStopOrder", "market": v.market, "side": "SELL", "size": "0.01",
		"triggerPrice": mark.Mul(decimal.RequireFromString("0.9")).Round(0).String(), "reduceOnly": false})
	r := v.do(map[string]any{"operation": "modifyOrder", "orderId": stop["orderId"], "market": v.market,
		"triggerPrice": mark.Mul(decimal.RequireFromString("0.85")).Round(0).String()})
	if r.status != http.StatusBadRequest || r.code() != string(contract.CodeInvalidRequest) ||
		!contains(r.body["error"].(string), `"triggerPrice" cannot be amended`) {
		t.Fatalf("triggerPrice of a Binance stop: %d %s", r.status, r.raw)
	}
	if o := v.openOrder(stop["orderId"].(string)); o == nil {
		t.Fatalf("the refused modify touched the stop order")
	}
}

// TestAsterModifyOrder: Modify Order (LIMIT only) and countdownCancelAll
// (per symbol, so native only with a market) on the Aster simulator.
func TestAsterModifyOrder(t *testing.T) {
	a := startAster(t, astersim.Config{}, nil)
	v := venueCall{g: a.testGateway, key: a.live, cred: a.mainCred, market: "BTC-USDT-PERP", size: "0.01", nativeMarket: true}
	checkModifyOrder(t, v)
	checkDeadManSwitch(t, v)
}

// TestBybitModifyOrder: order/amend on the Bybit simulator; Bybit's
// dead man's switch (disconnect cancel-all) is tied to a websocket, so
// the switch is emulated.
func TestBybitModifyOrder(t *testing.T) {
	b := startBybit(t, bybitsim.Config{}, nil)
	v := venueCall{g: b.testGateway, key: b.live, cred: b.mainCred, market: "BTC-USDT-PERP", size: "0.01"}
	checkModifyOrder(t, v)
	checkDeadManSwitch(t, v)
	checkModifyStop(t, v)
}

// TestOKXModifyOrder: amend-order on the OKX simulator; cancel-all-after
// is account-wide with 10-120 s, so it serves a switch over every market
// only.
func TestOKXModifyOrder(t *testing.T) {
	o := startOKX(t, okxsim.Config{}, nil)
	v := venueCall{g: o.testGateway, key: o.live, cred: o.mainCred, market: "BTC-USDT-PERP", size: "0.01", nativeAll: true}
	checkModifyOrder(t, v)
	checkDeadManSwitch(t, v)
	checkModifyStop(t, v)
}

// checkModifyStop amends a stop's size and trigger price in place.
func checkModifyStop(t *testing.T, v venueCall) {
	d := decimal.RequireFromString
	mark := d(v.ok(map[string]any{"operation": "getMarkPrice", "market": v.market})["markPrice"].(string))
	trigger := mark.Mul(d("0.85")).Round(0)
	stop := v.ok(map[string]any{"operation": "placeStopOrder", "market": v.market, "side": "SELL", "size": v.size,
		"triggerPrice": mark.Mul(d("0.9")).Round(0).String(), "reduceOnly": false})
	got := v.ok(map[string]any{"operation": "modifyOrder", "orderId": stop["orderId"], "market": v.market,
		"triggerPrice": trigger.String(), "size": d(v.size).Mul(d("2")).String()})
	o := v.openOrder(stop["orderId"].(string))
	if o == nil || got["triggerPrice"] == nil || !d(o["triggerPrice"].(string)).Equal(trigger) || !d(o["size"].(string)).Equal(d(v.size).Mul(d("2"))) {
		t.Fatalf("modifyOrder of a stop answered %v; the venue lists %v", got, o)
	}
	r := v.do(map[string]any{"operation": "modifyOrder", "orderId": stop["orderId"], "market": v.market, "price": trigger.String()})
	if r.status != http.StatusBadRequest || !contains(r.body["error"].(string), `"price" does not apply`) {
		t.Fatalf("price on a stop: %d %s", r.status, r.raw)
	}
	v.ok(map[string]any{"operation": "cancelOrder", "orderId": stop["orderId"], "market": v.market})
}

// TestHyperliquidModifyOrder: the modify action on the Hyperliquid
// simulator; scheduleCancel is account-wide, so it serves a switch over
// every market only.
func TestHyperliquidModifyOrder(t *testing.T) {
	e := startHyperliquid(t)
	v := venueCall{g: e.testGateway, key: e.Bootstrap().APIKey, cred: e.testCred, market: "BTC", size: "0.01", nativeAll: true}
	checkModifyOrder(t, v)
	checkDeadManSwitch(t, v)
	checkModifyStop(t, v)

	// modify sends the whole order again: a post-only order stays post-only
	// and keeps its cloid.
	mark := decimal.RequireFromString(v.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"].(string))
	po := v.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "postOnly": true,
		"price": mark.Mul(decimal.RequireFromString("0.7")).Round(0).String(), "clientOrderId": "amend-alo"})
	v.ok(map[string]any{"operation": "modifyOrder", "orderId": po["orderId"], "market": "BTC", "size": "0.02"})
	acts := e.sim.Actions()
	m, ok := acts[len(acts)-1].Action.(*hl.ModifyAction)
	if !ok || m.Order.Type.Limit == nil || m.Order.Type.Limit.TIF != "Alo" || m.Order.Cloid == "" {
		t.Fatalf("the modify sent %+v, want the order's Alo time in force and its cloid", acts[len(acts)-1].Action)
	}
}

// TestParadexModifyOrder: Modify order on the Paradex simulator; Paradex
// has no dead man's switch over REST, so the switch is emulated.
func TestParadexModifyOrder(t *testing.T) {
	p := startParadex(t, paradexsim.Config{}, nil)
	v := venueCall{g: p.testGateway, key: p.live, cred: p.mainCred, market: "BTC", size: "0.01"}
	checkModifyOrder(t, v)
	checkDeadManSwitch(t, v)
}

// TestModifyOrderGuards: guards judge the order after the change, and a
// raised notional counts its increase (each time) against
// maxDailyNotional, a lowered one nothing; a dry run is judged alike.
func TestModifyOrderGuards(t *testing.T) {
	g := startGateway(t)
	d := decimal.RequireFromString
	mark := d(g.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"].(string))
	price := mark.Mul(d("0.5")).Round(0)
	n := price.Mul(d("0.01")) // the notional of 0.01 BTC at price
	maxOrder, maxDaily := n.Mul(d("3.5")), n.Mul(d("4.5"))
	key := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, Guards: contract.Guards{MaxOrderNotional: &maxOrder, MaxDailyNotional: &maxDaily}})
	v := venueCall{g: g, key: key, cred: g.Bootstrap().CredentialID, market: "BTC-USD-PERP"}
	id := v.ok(map[string]any{"operation": "placeLimitOrder", "market": v.market, "side": "BUY", "size": "0.01", "price": price.String()})["orderId"]
	resize := func(size string, dryRun bool) response {
		return v.do(map[string]any{"operation": "modifyOrder", "orderId": id, "market": v.market, "size": size, "dryRun": dryRun})
	}
	want := func(r response, code contract.Code) {
		t.Helper()
		if code == "" && r.status != http.StatusOK || code != "" && r.code() != string(code) {
			t.Fatalf("want %q, got %d %s", code, r.status, r.raw)
		}
	}
	want(resize("0.04", true), contract.CodeOrderNotionalExceeded) // 4n > 3.5n
	want(resize("0.04", false), contract.CodeOrderNotionalExceeded)
	want(resize("0.03", false), "") // +2n: 3n today
	want(resize("0.02", false), "") // lowered: still 3n
	want(resize("0.03", true), "")  // a dry run counts nothing
	want(resize("0.03", false), "") // +n: 4n
	want(resize("0.02", false), "")
	want(resize("0.03", true), contract.CodeDailyNotionalExceeded) // +n would make 5n > 4.5n
	want(resize("0.03", false), contract.CodeDailyNotionalExceeded)
	if o := v.openOrder(id.(string)); o == nil || !d(o["size"].(string)).Equal(d("0.02")) {
		t.Fatalf("a refused modify changed the order: %v", o)
	}
	v.ok(map[string]any{"operation": "cancelOrder", "orderId": id, "market": v.market})

	// maxPositionNotional: the order counts once, at its new value.
	maxPos := n.Mul(d("2.5"))
	v.key = g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, Guards: contract.Guards{MaxPositionNotional: &maxPos}})
	id = v.ok(map[string]any{"operation": "placeLimitOrder", "market": v.market, "side": "BUY", "size": "0.01", "price": price.String()})["orderId"]
	want(resize("0.02", false), "") // 2n, not n + 2n
	want(resize("0.03", false), contract.CodePositionNotionalExceeded)
}
