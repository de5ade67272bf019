package standalone

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/admin"
	"github.com/shopspring/decimal"
)

// guardEnv is a Binance-simulator gateway with one live key whose guards
// the test sets through the admin API, as an operator would.
type guardEnv struct {
	*binanceEnv
	key   string
	keyID string
	adm   *admin.Client
}

func startGuards(t *testing.T) *guardEnv {
	t.Helper()
	b := startBinance(t, sim.Config{})
	k, err := b.Keys().CreateKey(context.Background(), b.Bootstrap().AccountID, keys.KeyRequest{Env: contract.KeyEnvLive})
	if err != nil {
		t.Fatal(err)
	}
	return &guardEnv{binanceEnv: b, key: k.Key.Reveal(), keyID: k.Info.ID,
		adm: admin.NewClient(b.AdminURL(), b.Bootstrap().AdminToken)}
}

// guard changes the key's guards with PATCH /admin/v1/keys/{id} and waits
// until the edge applies them (the change event reaches it within 1 s).
func (g *guardEnv) guard(patch map[string]any, takesEffect func() bool) admin.KeyResponse {
	g.t.Helper()
	body := map[string]json.RawMessage{}
	for k, v := range patch {
		body[k], _ = json.Marshal(v)
	}
	start := time.Now()
	res, err := g.adm.UpdateKeyGuards(context.Background(), g.keyID, body)
	if err != nil {
		g.t.Fatalf("PATCH guards %v: %v", patch, err)
	}
	for !takesEffect() {
		if time.Since(start) > time.Second {
			g.t.Fatalf("guards %v not applied by the edge within 1 s", patch)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return res
}

func (g *guardEnv) do(body map[string]any) response {
	g.t.Helper()
	if _, ok := body["credentialId"]; !ok {
		body["credentialId"] = g.mainCred
	}
	return g.call(g.key, body)
}

func (g *guardEnv) refused(body map[string]any, code contract.Code, mentions ...string) {
	g.t.Helper()
	r := g.do(body)
	if r.status != http.StatusForbidden || r.code() != string(code) {
		g.t.Fatalf("%v: want 403 %s, got %d %s", body["operation"], code, r.status, r.raw)
	}
	for _, m := range mentions {
		if !contains(r.body["error"].(string), m) {
			g.t.Fatalf("%v: message %q does not name %q", body["operation"], r.body["error"], m)
		}
	}
}

func (g *guardEnv) accepted(body map[string]any) map[string]any {
	g.t.Helper()
	r := g.do(body)
	if r.status != http.StatusOK || r.body["success"] != true {
		g.t.Fatalf("%v: want success, got %d %s", body["operation"], r.status, r.raw)
	}
	return r.body
}

// orderHits counts requests to Binance's order endpoints.
func (b *binanceEnv) orderHits() int {
	n := 0
	for _, p := range []string{"/fapi/v1/order", "/fapi/v1/batchOrders", "/fapi/v1/algoOrder"} {
		n += b.sim.Hits(http.MethodPost, p)
	}
	return n
}

func limitBody(market, side, size string, price decimal.Decimal, clientID string) map[string]any {
	return map[string]any{"operation": "placeLimitOrder", "market": market, "side": side, "size": size,
		"price": price.String(), "clientOrderId": clientID}
}

func TestGuardsReadOnlyAndLeverage(t *testing.T) {
	g := startGuards(t)
	g.accepted(map[string]any{"operation": "setLeverage", "market": "BTCUSDT", "leverage": 20})

	res := g.guard(map[string]any{"readOnly": true, "maxLeverage": 5}, func() bool {
		return g.do(map[string]any{"operation": "setLeverage", "market": "BTCUSDT", "leverage": 3}).code() == string(contract.CodeKeyReadOnly)
	})
	if !res.ReadOnly || res.MaxLeverage == nil || *res.MaxLeverage != 5 {
		t.Fatalf("PATCH answered %+v", res.GuardsView)
	}
	before := g.orderHits()
	for _, body := range []map[string]any{
		limitBody("BTCUSDT", "BUY", "0.01", decimal.NewFromInt(30000), ""),
		{"operation": "cancelAllOrders", "market": "BTCUSDT"},
		{"operation": "closeAllPositions", "market": "BTCUSDT"},
		{"operation": "placeMarketOrder", "market": "BTCUSDT", "side": "BUY", "size": "0.01", "dryRun": true},
	} {
		g.refused(body, contract.CodeKeyReadOnly, "read-only", body["operation"].(string))
	}
	g.accepted(map[string]any{"operation": "getBalance"})
	g.accepted(map[string]any{"operation": "getOrders"})
	if g.orderHits() != before {
		t.Fatal("a read-only key's order reached the venue")
	}

	g.guard(map[string]any{"readOnly": nil}, func() bool {
		return g.do(map[string]any{"operation": "setLeverage", "market": "BTCUSDT", "leverage": 5}).status == http.StatusOK
	})
	g.refused(map[string]any{"operation": "setLeverage", "market": "BTCUSDT", "leverage": 6},
		contract.CodeLeverageExceeded, "maxLeverage of 5", "6")
}

func TestGuardsAllowedMarkets(t *testing.T) {
	g := startGuards(t)
	res := g.guard(map[string]any{"allowedMarkets": []string{"btcusdt", "1000PEPE"}}, func() bool {
		return g.do(map[string]any{"operation": "setLeverage", "market": "ETHUSDT", "leverage": 3}).code() == string(contract.CodeMarketNotAllowed)
	})
	if got := res.AllowedMarkets; len(got) != 2 || got[0] != "1000PEPE" || got[1] != "BTC-USDT-PERP" {
		t.Fatalf("allowedMarkets stored as %v, want canonical [1000PEPE BTC-USDT-PERP]", got)
	}
	mark := decimal.RequireFromString(g.accepted(map[string]any{"operation": "getMarkPrice", "market": "BTCUSDT"})["markPrice"].(string))
	price := mark.Mul(decimal.RequireFromString("0.9")).Truncate(0)
	for _, spelling := range []string{"BTC-USDT-PERP", "BTC/USDT:USDT", "BTC"} {
		g.accepted(limitBody(spelling, "BUY", "0.01", price, ""))
	}
	g.accepted(map[string]any{"operation": "setLeverage", "market": "1000PEPEUSDT", "leverage": 3})
	before := g.orderHits()
	g.refused(limitBody("ETH-USDT-PERP", "BUY", "0.1", decimal.NewFromInt(1000), ""), contract.CodeMarketNotAllowed, "ETH-USDT-PERP", "BTC-USDT-PERP")
	g.refused(map[string]any{"operation": "placeMarketOrder", "market": "ETHUSDT", "side": "BUY", "size": "0.1"}, contract.CodeMarketNotAllowed)
	g.refused(map[string]any{"operation": "cancelAllOrders", "market": "ETHUSDT"}, contract.CodeMarketNotAllowed)
	g.refused(map[string]any{"operation": "placeProtectionOrders", "market": "ETHUSDT", "side": "LONG", "size": "0.1",
		"entryPrice": "1000", "tpPercent": 5}, contract.CodeMarketNotAllowed)
	g.accepted(map[string]any{"operation": "getMarkPrice", "market": "ETHUSDT"}) // reads stay open
	if g.orderHits() != before {
		t.Fatal("an order on a market outside allowedMarkets reached the venue")
	}

	batch := g.accepted(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
		{"market": "BTCUSDT", "side": "BUY", "size": "0.01", "price": price.String()},
		{"market": "ETHUSDT", "side": "BUY", "size": "0.1", "price": "1000"},
		{"market": "BTCUSDT", "side": "BUY", "size": "0.01", "price": price.String()},
	}})["results"].([]any)
	for i, wantStatus := range []string{"OPEN", "REJECTED", "OPEN"} {
		r := batch[i].(map[string]any)
		if r["status"] != wantStatus {
			t.Fatalf("batch[%d] = %v, want %s", i, r, wantStatus)
		}
	}
	if e := batch[1].(map[string]any)["error"].(map[string]any); e["code"] != string(contract.CodeMarketNotAllowed) {
		t.Fatalf("batch[1] error = %v", e)
	}
}

func TestGuardsNotional(t *testing.T) {
	g := startGuards(t)
	mark := decimal.RequireFromString(g.accepted(map[string]any{"operation": "getMarkPrice", "market": "BTCUSDT"})["markPrice"].(string))
	price := mark.Mul(decimal.RequireFromString("0.9")).Truncate(0)
	limit := price.Mul(decimal.RequireFromString("0.01")) // 0.01 BTC at price, exactly
	g.guard(map[string]any{"maxOrderNotional": limit.String()}, func() bool {
		return g.do(limitBody("BTCUSDT", "BUY", "0.011", price, "")).code() == string(contract.CodeOrderNotionalExceeded)
	})
	g.accepted(limitBody("BTCUSDT", "BUY", "0.01", price, "")) // at the limit
	g.refused(limitBody("BTCUSDT", "BUY", "0.011", price, ""), contract.CodeOrderNotionalExceeded, "maxOrderNotional of "+limit.String())
	// Market and stop orders are valued at the mark price.
	g.refused(map[string]any{"operation": "placeMarketOrder", "market": "BTCUSDT", "side": "BUY", "size": "0.02"},
		contract.CodeOrderNotionalExceeded, "maxOrderNotional")
	g.refused(map[string]any{"operation": "placeStopOrder", "market": "BTCUSDT", "side": "SELL", "size": "0.02",
		"triggerPrice": price.String(), "reduceOnly": false}, contract.CodeOrderNotionalExceeded)

	// Daily cap: three orders of 0.01 at price fit in 3 × limit; a fourth does not.
	daily := limit.Mul(decimal.NewFromInt(3))
	g.guard(map[string]any{"maxOrderNotional": nil, "maxDailyNotional": daily.String()}, func() bool {
		return g.do(limitBody("BTCUSDT", "BUY", "0.04", price, "")).code() == string(contract.CodeDailyNotionalExceeded)
	})
	// The order placed at the limit above was placed before the cap existed
	// and is not counted; today's count starts now.
	first := g.accepted(limitBody("BTCUSDT", "BUY", "0.01", price, "daily-1"))
	batch := g.accepted(map[string]any{"operation": "placeBatchOrder", "orders": []map[string]any{
		{"market": "BTCUSDT", "side": "BUY", "size": "0.01", "price": price.String(), "clientOrderId": "daily-2"},
		{"market": "BTCUSDT", "side": "BUY", "size": "0.02", "price": price.String(), "clientOrderId": "daily-big"},
		{"market": "BTCUSDT", "side": "BUY", "size": "0.01", "price": price.String(), "clientOrderId": "daily-3"},
	}})["results"].([]any)
	for i, wantStatus := range []string{"OPEN", "REJECTED", "OPEN"} {
		if r := batch[i].(map[string]any); r["status"] != wantStatus {
			t.Fatalf("batch[%d] = %v, want %s", i, r, wantStatus)
		}
	}
	if e := batch[1].(map[string]any)["error"].(map[string]any); e["code"] != string(contract.CodeDailyNotionalExceeded) {
		t.Fatalf("batch[1] error = %v", e)
	}
	g.refused(limitBody("BTCUSDT", "BUY", "0.01", price, "daily-4"), contract.CodeDailyNotionalExceeded, "maxDailyNotional of "+daily.String())
	// A retry of an order that exists is never refused, and counts once.
	again := g.accepted(limitBody("BTCUSDT", "BUY", "0.01", price, "daily-1"))
	if again["orderId"] != first["orderId"] {
		t.Fatalf("retry answered order %v, want the first %v", again["orderId"], first["orderId"])
	}
	// Removing the cap lets the order through.
	g.guard(map[string]any{"maxDailyNotional": nil}, func() bool {
		return g.do(limitBody("BTCUSDT", "BUY", "0.01", price, "daily-4")).status == http.StatusOK
	})
}

func TestDryRun(t *testing.T) {
	g := startGuards(t)
	mark := decimal.RequireFromString(g.accepted(map[string]any{"operation": "getMarkPrice", "market": "BTCUSDT"})["markPrice"].(string))
	price := mark.Mul(decimal.RequireFromString("0.9")).Truncate(0)
	g.guard(map[string]any{"maxOrderNotional": "1000000"}, func() bool { return true })
	before := g.orderHits()

	lim := g.accepted(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.0123456",
		"price": price.String() + ".37", "clientOrderId": "dry-1", "dryRun": true})
	rounded := price.Add(decimal.RequireFromString("0.3")) // a buy's price rounds down to the 0.1 tick
	want(t, "limit dry run", lim, map[string]any{"market": "BTC-USDT-PERP", "venueSymbol": "BTCUSDT", "side": "BUY",
		"size": "0.012", "price": rounded.String(), "notional": rounded.Mul(decimal.RequireFromString("0.012")).String(), "clientOrderId": "dry-1"})
	if lim["dryRun"] != true || lim["orderId"] != nil {
		t.Fatalf("limit dry run answered %v", lim)
	}
	if g.orderHits() != before { // orders only: the account feed may read meanwhile
		t.Fatalf("a limit dry run sent %d orders to the venue", g.orderHits()-before)
	}
	mkt := g.accepted(map[string]any{"operation": "placeMarketOrder", "market": "BTCUSDT", "side": "SELL", "size": "0.01", "dryRun": true})
	if mkt["dryRun"] != true || mkt["type"] != "MARKET" || mkt["price"] == nil || mkt["notional"] == nil {
		t.Fatalf("market dry run answered %v", mkt)
	}
	stop := g.accepted(map[string]any{"operation": "placeStopOrder", "market": "BTCUSDT", "side": "SELL", "size": "0.01",
		"triggerPrice": price.String(), "dryRun": true})
	want(t, "stop dry run", stop, map[string]any{"type": "STOP_MARKET", "triggerPrice": price.String(), "reduceOnly": true})
	batch := g.accepted(map[string]any{"operation": "placeBatchOrder", "dryRun": true, "orders": []map[string]any{
		{"market": "BTCUSDT", "side": "BUY", "size": "0.01", "price": price.String()},
		{"market": "BTCUSDT", "side": "BUY", "size": "100", "price": price.String()},
	}})
	results := batch["results"].([]any)
	if batch["dryRun"] != true || results[0].(map[string]any)["status"] != "DRY_RUN" || results[1].(map[string]any)["status"] != "REJECTED" {
		t.Fatalf("batch dry run answered %v", batch)
	}
	prot := g.accepted(map[string]any{"operation": "placeProtectionOrders", "market": "BTCUSDT", "side": "LONG", "size": "0.01",
		"entryPrice": price.String(), "tpPercent": 10, "slPercent": 5, "dryRun": true})
	tp, sl := prot["takeProfit"].(map[string]any), prot["stopLoss"].(map[string]any)
	if prot["dryRun"] != true || tp["side"] != "SELL" || sl["side"] != "SELL" || tp["reduceOnly"] != true {
		t.Fatalf("protection dry run answered %v", prot)
	}
	if g.orderHits() != before {
		t.Fatalf("dry runs sent %d orders to the venue", g.orderHits()-before)
	}
	// A dry run does not use up its clientOrderId: the real order places.
	real := g.accepted(limitBody("BTCUSDT", "BUY", "0.012", price, "dry-1"))
	if real["orderId"] == nil || real["dryRun"] != nil {
		t.Fatalf("real order after a dry run answered %v", real)
	}
	// Guards and venue rules judge a dry run as a real order.
	g.refused(map[string]any{"operation": "placeLimitOrder", "market": "BTCUSDT", "side": "BUY", "size": "100",
		"price": price.String(), "dryRun": true}, contract.CodeOrderNotionalExceeded)
	r := g.do(map[string]any{"operation": "placeLimitOrder", "market": "BTCUSDT", "side": "BUY", "size": "0.0001",
		"price": price.String(), "dryRun": true})
	if r.status != http.StatusBadRequest {
		t.Fatalf("a dry run below the venue's minimums answered %d %s", r.status, r.raw)
	}
}

// TestGuardsMCP: the same guards and dry runs through MCP tools, each
// answer valid against the tool's output schema: every limit passes at its
// value and refuses just above it.
func TestGuardsMCP(t *testing.T) {
	g := startGateway(t)
	cred := g.Bootstrap().CredentialID
	mark := decimal.RequireFromString(g.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"].(string))
	price := mark.Mul(decimal.RequireFromString("0.9")).Truncate(0)
	capped := price.Mul(decimal.RequireFromString("0.01")) // 0.01 BTC at price, exactly
	readOnly := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, Guards: contract.Guards{ReadOnly: true}})
	for i, transport := range mcpTransportNames {
		t.Run(transport, func(t *testing.T) {
			daily := capped.Mul(decimal.NewFromInt(2))
			limited := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, Guards: contract.Guards{
				MaxOrderNotional: &capped, MaxDailyNotional: &daily, AllowedMarkets: []string{"BTC"}, MaxLeverage: 3}})
			ro := mustConnectMCP(t, g, transport, readOnly)
			ro.ok("get_mark_price", map[string]any{"credentialId": cred, "market": "BTC"})
			res, body := ro.call("cancel_all_orders", map[string]any{"credentialId": cred, "market": "BTC"})
			if !res.IsError || body["code"] != string(contract.CodeKeyReadOnly) {
				t.Fatalf("read-only key cancel_all_orders: %v", body)
			}

			c := mustConnectMCP(t, g, transport, limited)
			order := func(size string, dry bool) map[string]any {
				return map[string]any{"credentialId": cred, "market": "BTC", "side": "BUY", "size": size,
					"price": price.String(), "dryRun": dry, "clientOrderId": strings.ReplaceAll(fmt.Sprintf("mcp-%d-%s-%v", i, size, dry), ".", "_")}
			}
			openOrders := func() int {
				return len(c.ok("get_orders", map[string]any{"credentialId": cred})["orders"].([]any))
			}
			// maxLeverage refuses orders on a market whose leverage is above it.
			if res, body := c.call("place_limit_order", order("0.01", true)); i == 0 && (!res.IsError || body["code"] != string(contract.CodeLeverageExceeded)) {
				t.Fatalf("an order at the account's 10x under maxLeverage 3: want LEVERAGE_EXCEEDED, got %v", body)
			}
			c.ok("set_leverage", map[string]any{"credentialId": cred, "market": "BTC", "leverage": 3})
			before := openOrders()
			dry := c.ok("place_limit_order", order("0.01", true))
			if dry["dryRun"] != true || dry["notional"] != capped.String() {
				t.Fatalf("dry run through MCP: %v", dry)
			}
			if n := openOrders(); n != before {
				t.Fatalf("a dry run through MCP left %d open orders, want %d", n, before)
			}
			c.ok("place_limit_order", order("0.01", false)) // at maxOrderNotional
			checks := []struct {
				tool string
				args map[string]any
				code contract.Code
			}{
				{"place_limit_order", order("0.011", false), contract.CodeOrderNotionalExceeded},
				{"place_limit_order", map[string]any{"market": "ETH", "side": "BUY", "size": "0.01", "price": "100"}, contract.CodeMarketNotAllowed},
				{"set_leverage", map[string]any{"market": "BTC", "leverage": 4}, contract.CodeLeverageExceeded},
			}
			for _, ch := range checks {
				ch.args["credentialId"] = cred
				res, body := c.call(ch.tool, ch.args)
				if !res.IsError || body["code"] != string(ch.code) {
					t.Fatalf("%s %v: want %s, got %v", ch.tool, ch.args, ch.code, body)
				}
			}
			c.ok("set_leverage", map[string]any{"credentialId": cred, "market": "BTC", "leverage": 3})
			second := order("0.01", false)
			second["clientOrderId"] = fmt.Sprintf("mcp-%d-second", i)
			c.ok("place_limit_order", second) // the daily total reaches maxDailyNotional
			third := order("0.01", false)
			third["clientOrderId"] = fmt.Sprintf("mcp-%d-third", i)
			if res, body := c.call("place_limit_order", third); !res.IsError || body["code"] != string(contract.CodeDailyNotionalExceeded) {
				t.Fatalf("third order: want DAILY_NOTIONAL_EXCEEDED, got %v", body)
			}
			c.ok("place_limit_order", second) // a retry of a placed order is answered, not refused
			c.ok("cancel_all_orders", map[string]any{"credentialId": cred, "market": "BTC"})
		})
	}
}
