package standalone

import (
	"net/http"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
	astersim "github.com/perpgate/perpgate/services/connectors/aster/sim"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	okxsim "github.com/perpgate/perpgate/services/connectors/okx/sim"
	paradexsim "github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// venueCalls reaches one credential with a key of choice: the gateway's
// helpers for the paper exchange and for a venue simulator differ.
type venueCalls struct {
	t    *testing.T
	call func(key string, body map[string]any) response
}

func (v venueCalls) ok(key string, body map[string]any) map[string]any {
	v.t.Helper()
	r := v.call(key, body)
	if r.status != http.StatusOK || r.body["success"] != true {
		v.t.Fatalf("%v: status %d body %s", body["operation"], r.status, r.raw)
	}
	return r.body
}

func (v venueCalls) refused(key string, body map[string]any, status int, code contract.Code) response {
	v.t.Helper()
	r := v.call(key, body)
	if r.status != status || r.code() != string(code) {
		v.t.Fatalf("%v %v: want %d %s, got %d %s", body["operation"], body["market"], status, code, r.status, r.raw)
	}
	return r
}

// restingBuy places a BUY limit at 80 % of the mark and returns its id.
func (v venueCalls) restingBuy(key, market, size string) string {
	v.t.Helper()
	mark := decimal.RequireFromString(v.ok(key, map[string]any{"operation": "getMarkPrice", "market": market})["markPrice"].(string))
	return v.ok(key, map[string]any{"operation": "placeLimitOrder", "market": market, "side": "BUY", "size": size,
		"price": mark.Mul(decimal.RequireFromString("0.8")).Round(0).String()})["orderId"].(string)
}

func (v venueCalls) open(key, orderID string) bool {
	for _, o := range v.ok(key, map[string]any{"operation": "getOrders"})["orders"].([]any) {
		if o.(map[string]any)["id"] == orderID {
			return true
		}
	}
	return false
}

// checkCancelJudgesRealMarket: a key limited to BTC cannot cancel an ETH
// stop, with no market or with BTC named beside the ETH order's id, and
// still cancels its own BTC orders without naming the market.
func checkCancelJudgesRealMarket(v venueCalls, owner, limited, ethSize string) {
	v.t.Helper()
	ethMark := decimal.RequireFromString(v.ok(owner, map[string]any{"operation": "getMarkPrice", "market": "ETH"})["markPrice"].(string))
	eth := v.ok(owner, map[string]any{"operation": "placeStopOrder", "market": "ETH", "side": "SELL", "size": ethSize,
		"triggerPrice": ethMark.Mul(decimal.RequireFromString("0.8")).Round(0).String(), "reduceOnly": false})["orderId"].(string)
	btc := v.restingBuy(owner, "BTC", "0.01")
	for _, body := range []map[string]any{
		{"operation": "cancelOrder", "orderId": eth},
		{"operation": "cancelOrder", "orderId": eth, "market": "BTC"},
	} {
		r := v.refused(limited, body, http.StatusForbidden, contract.CodeMarketNotAllowed)
		if !contains(r.body["error"].(string), "ETH") {
			v.t.Fatalf("refusal %q does not name the order's market", r.body["error"])
		}
	}
	if !v.open(owner, eth) {
		v.t.Fatal("a key limited to BTC cancelled an ETH order")
	}
	v.ok(limited, map[string]any{"operation": "cancelOrder", "orderId": btc})
	if v.open(owner, btc) {
		v.t.Fatal("the BTC order is still open after the limited key cancelled it")
	}
	r := v.refused(limited, map[string]any{"operation": "cancelOrder", "orderId": "999999999"}, http.StatusBadGateway, contract.CodeExchangeError)
	if r.body["reason"] != string(contract.ReasonOrderNotFound) {
		v.t.Fatalf("an unknown order id answered %s", r.raw)
	}
	v.ok(owner, map[string]any{"operation": "cancelOrder", "orderId": eth}) // a key without allowedMarkets may
}

func TestGuardsCancelOrderPaper(t *testing.T) {
	g := startGateway(t)
	limited := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, Guards: contract.Guards{AllowedMarkets: []string{"BTC"}}})
	checkCancelJudgesRealMarket(venueCalls{t: t, call: g.call}, g.Bootstrap().APIKey, limited, "0.1")
}

func TestGuardsCancelOrderParadex(t *testing.T) {
	p := startParadex(t, paradexsim.Config{}, nil)
	limited := p.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive, Guards: contract.Guards{AllowedMarkets: []string{"BTC"}}})
	call := func(key string, body map[string]any) response {
		body["credentialId"] = p.mainCred
		return p.call(key, body)
	}
	checkCancelJudgesRealMarket(venueCalls{t: t, call: call}, p.live, limited, "0.1")
}

// TestGuardsMaxPositionNotional: the position after an order plus the
// resting orders on its side, valued as guards value orders, may not pass
// maxPositionNotional, through /v1, dry runs, batches and MCP; the other
// side and reduce-only orders pass.
func TestGuardsMaxPositionNotional(t *testing.T) {
	g := startGateway(t)
	mark := decimal.RequireFromString(g.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"].(string))
	unit := mark.Mul(decimal.RequireFromString("0.01"))
	price := func(f string) string { return mark.Mul(decimal.RequireFromString(f)).Round(0).String() }
	capped := unit.Mul(decimal.RequireFromString("2.5"))
	key := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, Guards: contract.Guards{MaxPositionNotional: &capped}})
	v := venueCalls{t: t, call: g.call}
	buy := func(f string) map[string]any {
		return map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": price(f)}
	}
	// A long of one unit, and a resting BUY of 0.9: 1.9 units.
	v.ok(key, map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"})
	v.ok(key, buy("0.9"))
	// Another 0.9 would make 2.8.
	v.refused(key, buy("0.9"), http.StatusForbidden, contract.CodePositionNotionalExceeded)
	dry := buy("0.9")
	dry["dryRun"] = true
	r := v.refused(key, dry, http.StatusForbidden, contract.CodePositionNotionalExceeded)
	if !contains(r.body["error"].(string), "maxPositionNotional of "+capped.String()) {
		t.Fatalf("refusal %q does not name the cap", r.body["error"])
	}
	// The batch's first order fits (2.4 units), the second does not.
	for _, dryRun := range []bool{true, false} {
		res := v.ok(key, map[string]any{"operation": "placeBatchOrder", "dryRun": dryRun, "orders": []map[string]any{
			{"market": "BTC", "side": "BUY", "size": "0.01", "price": price("0.5")},
			{"market": "BTC", "side": "BUY", "size": "0.01", "price": price("0.5")},
		}})["results"].([]any)
		first, second := res[0].(map[string]any), res[1].(map[string]any)
		if first["status"] == "REJECTED" || second["status"] != "REJECTED" ||
			second["error"].(map[string]any)["code"] != string(contract.CodePositionNotionalExceeded) {
			t.Fatalf("batch (dryRun %v): %v", dryRun, res)
		}
	}
	for _, transport := range mcpTransportNames {
		c := mustConnectMCP(t, g, transport, key)
		args := buy("0.9")
		delete(args, "operation")
		args["credentialId"] = g.Bootstrap().CredentialID
		if res, body := c.call("place_limit_order", args); !res.IsError || body["code"] != string(contract.CodePositionNotionalExceeded) {
			t.Fatalf("%s: want POSITION_NOTIONAL_EXCEEDED, got %v", transport, body)
		}
	}
	// A SELL reduces the long first; a reduce-only order always passes.
	v.ok(key, map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "SELL", "size": "0.02", "price": price("1.2")})
	v.ok(key, map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "SELL", "size": "0.01", "reduceOnly": true})
}

// checkLeverageGuard: a key with maxLeverage 5 cannot place an order that
// adds exposure while the market is at the account's higher leverage;
// once it lowers the leverage it can, and a raise by another key is seen
// by the next order.
func checkLeverageGuard(v venueCalls, owner, limited string) {
	v.t.Helper()
	mark := decimal.RequireFromString(v.ok(owner, map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"].(string))
	order := map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
		"price": mark.Mul(decimal.RequireFromString("0.8")).Round(0).String()}
	v.ok(owner, map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 10})
	r := v.refused(limited, clone(order), http.StatusForbidden, contract.CodeLeverageExceeded)
	if !contains(r.body["error"].(string), "maxLeverage of 5") {
		v.t.Fatalf("refusal %q does not name the cap", r.body["error"])
	}
	v.ok(limited, map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 5})
	v.ok(limited, clone(order))
	v.ok(owner, map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 10})
	v.refused(limited, clone(order), http.StatusForbidden, contract.CodeLeverageExceeded)
}

func TestGuardsMaxLeverageOnOrders(t *testing.T) {
	guards := contract.Guards{MaxLeverage: 5}
	t.Run("paper", func(t *testing.T) {
		g := startGateway(t)
		limited := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, Guards: guards})
		checkLeverageGuard(venueCalls{t: t, call: g.call}, g.Bootstrap().APIKey, limited)
	})
	t.Run("hyperliquid", func(t *testing.T) {
		h := startHyperliquid(t)
		limited := h.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, Guards: guards})
		call := func(key string, body map[string]any) response {
			body["credentialId"] = h.testCred
			return h.call(key, body)
		}
		checkLeverageGuard(venueCalls{t: t, call: call}, h.Bootstrap().APIKey, limited)
	})
	venues := map[string]func(t *testing.T) *binanceEnv{
		"binance": func(t *testing.T) *binanceEnv { return startBinance(t, sim.Config{}) },
		"bybit":   func(t *testing.T) *binanceEnv { return startBybit(t, bybitsim.Config{}, nil).binanceEnv },
		"paradex": func(t *testing.T) *binanceEnv { return startParadex(t, paradexsim.Config{}, nil).binanceEnv },
		"okx":     func(t *testing.T) *binanceEnv { return startOKX(t, okxsim.Config{}, nil).binanceEnv },
		"aster":   func(t *testing.T) *binanceEnv { return startAster(t, astersim.Config{}, nil).binanceEnv },
	}
	for name, start := range venues {
		t.Run(name, func(t *testing.T) {
			b := start(t)
			limited := b.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive, Guards: guards})
			call := func(key string, body map[string]any) response {
				body["credentialId"] = b.mainCred
				return b.call(key, body)
			}
			checkLeverageGuard(venueCalls{t: t, call: call}, b.live, limited)
		})
	}
}
