package standalone

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// pricingEnv is a Binance-simulator gateway whose prices stand still, so
// every order's guard value is known exactly: size 0.01 BTC at the mark is
// worth unit, and the default slippage allowance is 50 bps.
type pricingEnv struct {
	*binanceEnv
	mark, unit decimal.Decimal
	capKeys    map[string]string
}

func startPricing(t *testing.T, mutate ...func(*Config)) *pricingEnv {
	t.Helper()
	frozen := time.Now()
	b := startBinanceAt(t, sim.Config{}, func() time.Time { return frozen }, mutate...)
	mark := decimal.RequireFromString(b.ok(map[string]any{"operation": "getMarkPrice", "market": "BTCUSDT"})["markPrice"].(string))
	return &pricingEnv{binanceEnv: b, mark: mark, unit: mark.Mul(num("0.01")), capKeys: map[string]string{}}
}

// key makes a live key with guards.
func (p *pricingEnv) key(g contract.Guards) string {
	return p.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive, Guards: g})
}

// price is the mark times f, on the 0.1 tick.
func (p *pricingEnv) price(f string) string { return p.mark.Mul(num(f)).Truncate(1).String() }

func (p *pricingEnv) with(key string, body map[string]any) response {
	p.t.Helper()
	body["credentialId"] = p.mainCred
	return p.call(key, body)
}

func (p *pricingEnv) wantCode(key string, body map[string]any, status int, code contract.Code) response {
	p.t.Helper()
	r := p.with(key, body)
	if r.status != status || r.code() != string(code) {
		p.t.Fatalf("%v %v: want %d %s, got %d %s", body["operation"], body["side"], status, code, r.status, r.raw)
	}
	return r
}

// pricingCase is an order worth more than cap units (0.01 BTC at the mark)
// at the highest price it can trade at, and no more than cap units as the
// gateway valued it before.
type pricingCase struct {
	body map[string]any
	cap  string
}

func (p *pricingEnv) pricingOrders() map[string]pricingCase {
	return map[string]pricingCase{
		// Fills at the book near the mark, not at half of it.
		"SELL limit far below the bid": {map[string]any{"operation": "placeLimitOrder", "market": "BTCUSDT", "side": "SELL",
			"size": "0.01", "price": p.price("0.5")}, "0.75"},
		// Can only fire at or above its trigger, then trades at market.
		"BUY stop above the mark": {map[string]any{"operation": "placeStopOrder", "market": "BTCUSDT", "side": "BUY", "size": "0.01",
			"triggerPrice": p.price("1.2"), "reduceOnly": false}, "1.1"},
		// Orders that execute at market are moved by the 50 bps allowance.
		"SELL stop below the mark": {map[string]any{"operation": "placeStopOrder", "market": "BTCUSDT", "side": "SELL", "size": "0.01",
			"triggerPrice": p.price("0.8"), "reduceOnly": false}, "1.0025"},
		"BUY market":  {map[string]any{"operation": "placeMarketOrder", "market": "BTCUSDT", "side": "BUY", "size": "0.01"}, "1.0025"},
		"SELL market": {map[string]any{"operation": "placeMarketOrder", "market": "BTCUSDT", "side": "SELL", "size": "0.01"}, "1.0025"},
	}
}

// capKey is a key whose maxOrderNotional is factor units, made once.
func (p *pricingEnv) capKey(factor string) string {
	if k, ok := p.capKeys[factor]; ok {
		return k
	}
	c := p.unit.Mul(num(factor))
	p.capKeys[factor] = p.key(contract.Guards{MaxOrderNotional: &c})
	return p.capKeys[factor]
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestGuardPricing: maxOrderNotional values every order at the highest
// price it can trade at (DESIGN §13), through /v1 and dry runs alike, and
// a dry run's notional is that value.
func TestGuardPricing(t *testing.T) {
	p := startPricing(t)
	before := p.orderHits()
	for name, c := range p.pricingOrders() {
		key := p.capKey(c.cap)
		for _, dry := range []bool{false, true} {
			body := clone(c.body)
			body["dryRun"] = dry
			r := p.with(key, body)
			if r.status != http.StatusForbidden || r.code() != string(contract.CodeOrderNotionalExceeded) {
				t.Errorf("%s (dryRun %v) under a cap of %s units: want 403 ORDER_NOTIONAL_EXCEEDED, got %d %s", name, dry, c.cap, r.status, r.raw)
			} else if !contains(r.body["error"].(string), "highest price") {
				t.Errorf("%s: message %q does not say how the order was valued", name, r.body["error"])
			}
		}
	}
	if n := p.orderHits() - before; n != 0 {
		t.Fatalf("%d orders above maxOrderNotional reached the venue", n)
	}
	// A BUY limit is worth its limit price: below the mark it passes the
	// cap, above it is refused though the mark would pass.
	key := p.capKey("1.0025")
	low := map[string]any{"operation": "placeLimitOrder", "market": "BTCUSDT", "side": "BUY", "size": "0.01", "price": p.price("0.99"), "dryRun": true}
	dry := p.with(key, low)
	if dry.status != http.StatusOK || !num(dry.body["notional"].(string)).Equal(num(p.price("0.99")).Mul(num("0.01"))) {
		t.Fatalf("BUY limit dry run: %d %s", dry.status, dry.raw)
	}
	p.wantCode(key, map[string]any{"operation": "placeLimitOrder", "market": "BTCUSDT", "side": "BUY", "size": "0.01",
		"price": p.price("1.01")}, http.StatusForbidden, contract.CodeOrderNotionalExceeded)

	// Without caps a dry run shows the value: the mark moved by 50 bps for
	// orders that execute at market, the higher of limit and mark for a
	// SELL limit, the trigger moved by 50 bps for a BUY stop above the mark.
	free := p.key(contract.Guards{})
	slip := num("1.005")
	for name, want := range map[string]decimal.Decimal{
		"BUY market":                   p.unit.Mul(slip),
		"SELL market":                  p.unit.Mul(slip),
		"SELL stop below the mark":     p.unit.Mul(slip),
		"SELL limit far below the bid": p.unit,
		"BUY stop above the mark":      num(p.price("1.2")).Mul(num("0.01")).Mul(slip),
	} {
		body := clone(p.pricingOrders()[name].body)
		body["dryRun"] = true
		r := p.with(free, body)
		if r.status != http.StatusOK || !num(r.body["notional"].(string)).Equal(want) {
			t.Fatalf("%s dry run: want notional %s, got %d %s", name, want, r.status, r.raw)
		}
	}
}

// TestGuardPricingBatchAndDaily: placeBatchOrder and its dry run value a
// SELL limit below the bid at the mark, and so does maxDailyNotional.
func TestGuardPricingBatchAndDaily(t *testing.T) {
	p := startPricing(t)
	key := p.capKey("0.75")
	orders := []map[string]any{
		{"market": "BTCUSDT", "side": "SELL", "size": "0.01", "price": p.price("0.5")},
		{"market": "BTCUSDT", "side": "BUY", "size": "0.01", "price": p.price("0.7")},
	}
	for _, dry := range []bool{true, false} {
		r := p.with(key, map[string]any{"operation": "placeBatchOrder", "orders": orders, "dryRun": dry})
		if r.status != http.StatusOK {
			t.Fatalf("batch (dryRun %v): %d %s", dry, r.status, r.raw)
		}
		results := r.body["results"].([]any)
		first, second := results[0].(map[string]any), results[1].(map[string]any)
		if first["status"] != "REJECTED" || first["error"].(map[string]any)["code"] != string(contract.CodeOrderNotionalExceeded) {
			t.Fatalf("batch (dryRun %v): the SELL far below the bid answered %v", dry, first)
		}
		if second["status"] == "REJECTED" {
			t.Fatalf("batch (dryRun %v): the BUY below the cap answered %v", dry, second)
		}
	}

	// Two SELLs at half the mark each count a whole unit against a daily
	// cap of 1.5 units: the second is refused.
	daily := p.unit.Mul(num("1.5"))
	dkey := p.key(contract.Guards{MaxDailyNotional: &daily})
	sell := func(id string) map[string]any {
		return map[string]any{"operation": "placeLimitOrder", "market": "BTCUSDT", "side": "SELL", "size": "0.01",
			"price": p.price("0.5"), "clientOrderId": id}
	}
	if r := p.with(dkey, sell("daily-sell-1")); r.status != http.StatusOK {
		t.Fatalf("first SELL: %d %s", r.status, r.raw)
	}
	p.wantCode(dkey, sell("daily-sell-2"), http.StatusForbidden, contract.CodeDailyNotionalExceeded)
}

// TestGuardPricingNoMark: without a mark price an order that needs one is
// refused with 503 naming the market data, never valued at its own price.
func TestGuardPricingNoMark(t *testing.T) {
	p := startPricing(t, func(c *Config) { c.Stream.Disabled = true })
	key := p.capKey("100")
	zero := regexp.MustCompile(`"markPrice":"[0-9.]+"`)
	p.sim.RewriteNext(http.MethodGet, "/fapi/v1/premiumIndex", func(b []byte) []byte {
		return zero.ReplaceAll(b, []byte(`"markPrice":"0"`))
	})
	before := p.orderHits()
	r := p.wantCode(key, map[string]any{"operation": "placeLimitOrder", "market": "BTCUSDT", "side": "SELL", "size": "0.01",
		"price": p.price("0.5")}, http.StatusServiceUnavailable, contract.CodeServiceUnavailable)
	if !contains(r.body["error"].(string), "market data") {
		t.Fatalf("message %q does not name the market data", r.body["error"])
	}
	if p.orderHits() != before {
		t.Fatal("an order that could not be valued reached the venue")
	}
}

func num(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// TestGuardPricingMCP: MCP tools value orders as /v1 does.
func TestGuardPricingMCP(t *testing.T) {
	p := startPricing(t)
	tools := map[string]string{"placeLimitOrder": "place_limit_order", "placeStopOrder": "place_stop_order", "placeMarketOrder": "place_market_order"}
	for _, transport := range mcpTransportNames {
		for name, c := range p.pricingOrders() {
			cl := mustConnectMCP(t, p.testGateway, transport, p.capKey(c.cap))
			args := clone(c.body)
			tool := tools[args["operation"].(string)]
			delete(args, "operation")
			args["credentialId"] = p.mainCred
			if res, body := cl.call(tool, args); !res.IsError || body["code"] != string(contract.CodeOrderNotionalExceeded) {
				t.Errorf("%s %s under a cap of %s units: want ORDER_NOTIONAL_EXCEEDED, got %v", transport, name, c.cap, body)
			}
		}
		cl := mustConnectMCP(t, p.testGateway, transport, p.capKey("0.75"))
		res, body := cl.call("place_batch_order", map[string]any{"credentialId": p.mainCred, "orders": []map[string]any{
			{"market": "BTCUSDT", "side": "SELL", "size": "0.01", "price": p.price("0.5")}}})
		if res.IsError {
			t.Fatalf("%s batch: %v", transport, body)
		}
		if r := body["results"].([]any)[0].(map[string]any); r["status"] != "REJECTED" {
			t.Errorf("%s batch: the SELL far below the bid answered %v", transport, r)
		}
	}
}

// TestProtectionGuardsAndBounds: a SHORT's take-profit at or below zero is
// refused before anything is sent, and a protection dry run values its
// legs as stops: the higher of trigger and mark, moved by the allowance.
func TestProtectionGuardsAndBounds(t *testing.T) {
	p := startPricing(t)
	before := p.orderHits()
	for _, tp := range []int{100, 150} {
		r := p.fails(map[string]any{"operation": "placeProtectionOrders", "market": "BTCUSDT", "side": "SHORT", "size": "0.01",
			"entryPrice": p.mark.String(), "tpPercent": tp}, http.StatusBadRequest, contract.CodeInvalidRequest, "")
		if !contains(r.body["error"].(string), "tpPercent") {
			t.Fatalf("tpPercent %d: message %q does not name tpPercent", tp, r.body["error"])
		}
	}
	if p.orderHits() != before {
		t.Fatal("a protection order with a negative trigger reached the venue")
	}
	dry := p.ok(map[string]any{"operation": "placeProtectionOrders", "market": "BTCUSDT", "side": "LONG", "size": "0.01",
		"entryPrice": p.mark.String(), "tpPercent": 10, "slPercent": 5, "dryRun": true})
	slip := num("1.005")
	for leg, want := range map[string]decimal.Decimal{
		"takeProfit": p.mark.Mul(num("1.1")).Mul(num("0.01")).Mul(slip), // trigger above the mark
		"stopLoss":   p.unit.Mul(slip),                                  // trigger below the mark: the mark
	} {
		got := num(dry[leg].(map[string]any)["notional"].(string))
		if !got.Equal(want) {
			t.Errorf("%s notional %s, want %s (%v)", leg, got, want, dry[leg])
		}
	}
}
