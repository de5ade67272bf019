package standalone

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// extCall is one venue's way to the extension operations: a key (builder
// tier, so MCP works too) and a credential of the venue.
type extCall struct {
	g    *testGateway
	key  string
	cred string
	x    contract.Exchange
	mcp  *mcpClient
}

func newExtCall(t *testing.T, g *testGateway, key, cred string, x contract.Exchange) *extCall {
	t.Helper()
	return &extCall{g: g, key: key, cred: cred, x: x, mcp: mustConnectMCP(t, g, "streamable", key)}
}

// v1 calls POST /v1 with the credential (unless body names an exchange)
// and wants success.
func (e *extCall) v1(body map[string]any) map[string]any {
	e.g.t.Helper()
	if _, ok := body["exchange"]; !ok {
		body["credentialId"] = e.cred
	}
	r := postJSON(e.g, e.key, body)
	if r.status != http.StatusOK || r.body["success"] != true {
		e.g.t.Fatalf("%v: status %d body %s", body, r.status, r.raw)
	}
	delete(r.body, "success")
	return r.body
}

// viaMCP runs the same call as a tool and wants the /v1 answer.
func (e *extCall) viaMCP(tool string, args map[string]any, v1 map[string]any) {
	e.g.t.Helper()
	if _, ok := args["exchange"]; !ok {
		args["credentialId"] = e.cred
	}
	got := e.mcp.ok(tool, args)
	if !jsonEqual(got, v1) {
		e.g.t.Fatalf("%s over MCP answered %v, /v1 %v", tool, got, v1)
	}
}

// checkCapabilities: getCapabilities by credential and by exchange (no
// credential) over /v1, as the MCP tool and as the MCP resource all give
// the venue's declaration: every operation of the table with a support
// level, getFundingPayments native, and each feature key.
func (e *extCall) checkCapabilities(t *testing.T) map[string]any {
	t.Helper()
	byCred := e.v1(map[string]any{"operation": "getCapabilities"})
	byExchange := e.v1(map[string]any{"operation": "getCapabilities", "exchange": string(e.x)})
	if !jsonEqual(byCred, byExchange) {
		t.Fatalf("by credential %v, by exchange %v", byCred, byExchange)
	}
	if byCred["exchange"] != string(e.x) {
		t.Fatalf("exchange %v, want %s", byCred["exchange"], e.x)
	}
	ops, _ := byCred["operations"].(map[string]any)
	if len(ops) != len(contract.Operations) {
		t.Fatalf("%d operations, want %d: %v", len(ops), len(contract.Operations), ops)
	}
	for _, op := range contract.Operations {
		if s := contract.Support(asString(ops[op.Name])); !s.Valid() {
			t.Errorf("operation %s: support %v", op.Name, ops[op.Name])
		}
	}
	if ops["getFundingPayments"] != "native" || ops["getCapabilities"] != "native" || ops["placeLimitOrder"] != "native" {
		t.Errorf("operations: %v", ops)
	}
	features, _ := byCred["features"].(map[string]any)
	for _, k := range []string{"maxBatchSize", "linkedProtection", "triggerPriceType", "minNotionalPrice",
		"fundingIntervalHours", "amendable", "deadManSwitch", "fillsHistoryDays", "openInterest", "attachedProtection"} {
		if _, ok := features[k]; !ok {
			t.Errorf("features lack %s: %v", k, features)
		}
	}
	e.viaMCP("get_capabilities", map[string]any{"exchange": string(e.x)}, byCred)
	e.viaMCP("get_capabilities", map[string]any{}, byCred)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := e.mcp.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "perpgate://capabilities/" + string(e.x)})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("resource: %v %v", res, err)
	}
	var fromResource map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &fromResource); err != nil {
		t.Fatalf("resource text %q: %v", res.Contents[0].Text, err)
	}
	delete(fromResource, "success")
	if !jsonEqual(fromResource, byCred) || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("resource %v, want %v", fromResource, byCred)
	}
	return byCred
}

// fundingPayments reads getFundingPayments over /v1 and checks MCP gives
// the same; it returns the payments.
func (e *extCall) fundingPayments(t *testing.T, params map[string]any) []map[string]any {
	t.Helper()
	body := map[string]any{"operation": "getFundingPayments"}
	args := map[string]any{}
	for k, v := range params {
		body[k], args[k] = v, v
	}
	res := e.v1(body)
	e.viaMCP("get_funding_payments", args, res)
	pays := objects(t, res["payments"])
	for i, p := range pays {
		if checkKind(p["amount"], decStr) != nil || p["market"] == "" || checkKind(p["time"], unixSec) != nil {
			t.Fatalf("payment %d: %v", i, p)
		}
		if i > 0 && p["time"].(float64) > pays[i-1]["time"].(float64) {
			t.Fatalf("payments not newest first: %v", pays)
		}
	}
	return pays
}

// wantPayments compares answered payments with the venue engine's own
// record (newest first), field by field.
// places, when positive, is the venue's precision of amounts.
func wantPayments(t *testing.T, got []map[string]any, want []paper.FundingPayment, canonical func(string) string, withDetail bool, places ...int32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d payments, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if len(places) > 0 && places[0] > 0 {
			w.Amount = w.Amount.Round(places[0])
		}
		if g["market"] != canonical(w.Market) || int64(g["time"].(float64)) != w.Time.Unix() ||
			!dec(t, g["amount"]).Equal(w.Amount) {
			t.Errorf("payment %d = %v, want %s %s at %d", i, g, canonical(w.Market), w.Amount, w.Time.Unix())
		}
		if withDetail && (!dec(t, g["rate"]).Equal(w.Rate) || !dec(t, g["positionSize"]).Equal(w.PositionSize)) {
			t.Errorf("payment %d = %v, want rate %s size %s", i, g, w.Rate, w.PositionSize)
		}
	}
}

// enginePayments is the engine's record of an account's payments.
func enginePayments(t *testing.T, e *paper.Engine, acct string) []paper.FundingPayment {
	t.Helper()
	ps, err := e.FundingPayments(acct, "", time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// postJSON posts body as it is (call fills in a credentialId).
func postJSON(g *testGateway, key string, body map[string]any) response {
	g.t.Helper()
	b, _ := json.Marshal(body)
	return g.post(key, b)
}

func asString(v any) string { s, _ := v.(string); return s }

// TestPaperExtensions: capabilities, funding payments (recorded for every
// payment the engine books; market, since and limit applied) and
// realizedPnl on fills, over /v1 and MCP; and getCapabilities by exchange
// obeys allowedExchanges and needs no credential.
func TestPaperExtensions(t *testing.T) {
	boundary := time.Now().UTC().Truncate(8 * time.Hour).Add(8 * time.Hour)
	clock := testenv.NewClock(boundary.Add(-10 * time.Second))
	g := startGateway(t, func(c *Config) { c.PaperNow = clock.Now })
	e := newExtCall(t, g, g.Bootstrap().APIKey, g.Bootstrap().CredentialID, contract.Paper)

	caps := e.checkCapabilities(t)
	if f := caps["features"].(map[string]any); f["linkedProtection"] != true || f["fundingIntervalHours"] != float64(8) {
		t.Errorf("paper features: %v", f)
	}

	if pays := e.fundingPayments(t, nil); len(pays) != 0 {
		t.Fatalf("payments before any position: %v", pays)
	}
	e.v1(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"})
	e.v1(map[string]any{"operation": "placeMarketOrder", "market": "ETH", "side": "SELL", "size": "0.1"})
	clock.Advance(10 * time.Second)
	clock.Advance(8 * time.Hour)

	canon := func(s string) string { return s }
	acct := g.Bootstrap().CredentialID
	engine := enginePayments(t, g.PaperEngine(), acct)
	if len(engine) != 4 {
		t.Fatalf("engine booked %d payments, want 4", len(engine))
	}
	wantPayments(t, e.fundingPayments(t, nil), engine, canon, true)
	wantPayments(t, e.fundingPayments(t, map[string]any{"limit": 3}), engine[:3], canon, true)
	var btc []paper.FundingPayment
	for _, p := range engine {
		if p.Market == "BTC-USD-PERP" {
			btc = append(btc, p)
		}
	}
	wantPayments(t, e.fundingPayments(t, map[string]any{"market": "BTC"}), btc, canon, true)
	wantPayments(t, e.fundingPayments(t, map[string]any{"since": boundary.Add(time.Hour).Unix()}), engine[:2], canon, true)

	// realizedPnl: the engine's figure on every fill, zero on the opening one.
	e.v1(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
	fills := objects(t, e.v1(map[string]any{"operation": "getFills", "market": "BTC"})["fills"])
	own, _ := g.PaperEngine().Fills(acct, "BTC-USD-PERP", 10)
	if len(fills) != 2 || len(own) != 2 {
		t.Fatalf("fills %v, engine %v", fills, own)
	}
	for i, f := range fills {
		if checkKind(f["realizedPnl"], decStr) != nil || !dec(t, f["realizedPnl"]).Equal(own[i].RealizedPnL) {
			t.Errorf("fill %d realizedPnl %v, want %s", i, f["realizedPnl"], own[i].RealizedPnL)
		}
	}
	if dec(t, fills[1]["realizedPnl"]).Sign() != 0 {
		t.Errorf("opening fill realized %v", fills[1]["realizedPnl"])
	}
	e.viaMCP("get_fills", map[string]any{"market": "BTC"}, e.v1(map[string]any{"operation": "getFills", "market": "BTC"}))

	t.Run("by exchange", func(t *testing.T) {
		onlyBinance := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, AllowedExchanges: []contract.Exchange{contract.Binance}})
		r := postJSON(g, onlyBinance, map[string]any{"operation": "getCapabilities", "exchange": "paper"})
		if r.status != http.StatusForbidden || r.code() != "EXCHANGE_NOT_ALLOWED" {
			t.Fatalf("outside allowedExchanges: %d %s", r.status, r.raw)
		}
		for _, tt := range []struct {
			body map[string]any
			msg  string
		}{
			{map[string]any{"operation": "getCapabilities"}, `field "credentialId" or field "exchange" is required`},
			{map[string]any{"operation": "getCapabilities", "exchange": "kraken"}, `field "exchange" must be one of`},
			{map[string]any{"operation": "getCapabilities", "exchange": "paper", "credentialId": g.Bootstrap().CredentialID}, "not both"},
			{map[string]any{"operation": "getFundingPayments", "exchange": "paper"}, `field "credentialId" is required`},
			{map[string]any{"operation": "getFundingPayments", "credentialId": g.Bootstrap().CredentialID, "limit": 1001}, `"limit"`},
		} {
			r := postJSON(g, g.Bootstrap().APIKey, tt.body)
			if r.status != http.StatusBadRequest || r.code() != "INVALID_REQUEST" || !contains(asString(r.body["error"]), tt.msg) {
				t.Errorf("%v: %d %s, want INVALID_REQUEST containing %q", tt.body, r.status, r.raw, tt.msg)
			}
		}
	})
}

var _ = decimal.Zero

// venueExt drives the extension operations against one venue's simulator
// on a clock the test moves: capabilities, funding payments across two
// funding times (checked against the simulator engine's own record, with
// limit, market and since), and realizedPnl on fills.
type venueExt struct {
	x        contract.Exchange
	g        *testGateway
	key      string
	cred     string
	engine   *paper.Engine // the simulator's
	acct     string        // the credential's account in that engine
	clock    *testenv.Clock
	interval time.Duration // the engine's funding interval
	market   string        // as sent, e.g. BTC
	size     string
	places   int32 // the venue's precision of funding amounts; 0: exact
	detail   bool  // the venue reports rate and position size
	pnl      bool  // the venue reports realizedPnl on fills
}

// nextFunding is the first funding time after now on an interval grid.
func nextFunding(now time.Time, interval time.Duration) time.Time {
	return now.Truncate(interval).Add(interval)
}

func (v venueExt) run(t *testing.T) {
	t.Helper()
	e := newExtCall(t, v.g, v.key, v.cred, v.x)
	e.checkCapabilities(t)
	if pays := e.fundingPayments(t, nil); len(pays) != 0 {
		t.Fatalf("payments before any position: %v", pays)
	}
	open := e.v1(map[string]any{"operation": "placeMarketOrder", "market": v.market, "side": "BUY", "size": v.size})
	canonical := asString(open["market"])
	first := nextFunding(v.clock.Now(), v.interval)
	v.clock.Set(first.Add(time.Second))
	v.clock.Set(first.Add(v.interval).Add(time.Second))

	engine := enginePayments(t, v.engine, v.acct)
	if len(engine) != 2 {
		t.Fatalf("the simulator booked %d payments, want 2", len(engine))
	}
	canon := func(string) string { return canonical }
	wantPayments(t, e.fundingPayments(t, nil), engine, canon, v.detail, v.places)
	wantPayments(t, e.fundingPayments(t, map[string]any{"limit": 1}), engine[:1], canon, v.detail, v.places)
	wantPayments(t, e.fundingPayments(t, map[string]any{"market": v.market}), engine, canon, v.detail, v.places)
	wantPayments(t, e.fundingPayments(t, map[string]any{"since": first.Add(time.Minute).Unix()}), engine[:1], canon, v.detail, v.places)
	for _, p := range e.fundingPayments(t, nil) {
		if _, has := p["rate"]; has != v.detail {
			t.Errorf("payment %v: rate present %v, want %v", p, has, v.detail)
		}
	}

	e.v1(map[string]any{"operation": "closeAllPositions", "market": v.market})
	fills := objects(t, e.v1(map[string]any{"operation": "getFills", "market": v.market})["fills"])
	own, err := v.engine.Fills(v.acct, "", 10)
	if err != nil || len(fills) != 2 || len(own) != 2 {
		t.Fatalf("fills %v, simulator %v (%v)", fills, own, err)
	}
	for i, f := range fills {
		pnl, has := f["realizedPnl"]
		switch {
		case has != v.pnl:
			t.Errorf("fill %d: realizedPnl present %v, want %v: %v", i, has, v.pnl, f)
		case has && !dec(t, pnl).Equal(own[i].RealizedPnL):
			t.Errorf("fill %d realizedPnl %v, simulator %s", i, pnl, own[i].RealizedPnL)
		}
	}
	e.viaMCP("get_fills", map[string]any{"market": v.market}, e.v1(map[string]any{"operation": "getFills", "market": v.market}))
}
