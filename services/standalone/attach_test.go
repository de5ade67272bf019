package standalone

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	astersim "github.com/perpgate/perpgate/services/connectors/aster/sim"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	hlsim "github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	okxsim "github.com/perpgate/perpgate/services/connectors/okx/sim"
	paradexsim "github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// Entries with takeProfit/stopLoss (issue 34) on every venue's simulator,
// one table: the scenarios are the same, only the venue differs.

// attachSim is one venue's simulator, kept across gateway restarts.
type attachSim struct {
	x      contract.Exchange
	env    contract.Environment
	secret string
	symbol string // BTC's symbol in the simulator's engine
	point  func(c *Config)
	engine func(g *testGateway) *paper.Engine
	setup  func(t *testing.T) // accounts the simulator needs before use
	// legs is how many open orders a pair shows: 2, or 1 where the venue
	// holds both in one order (OKX oco algo order).
	legs int
}

// attachEnv is a gateway serving one simulated venue.
type attachEnv struct {
	t         *testing.T
	g         *testGateway
	key, cred string
	engine    *paper.Engine
	symbol    string
	mcp       *mcpClient
	pair      int // open orders of one pair
}

func newAttachSim(t *testing.T, x contract.Exchange, clock *testenv.Clock) attachSim {
	t.Helper()
	serve := func(h http.Handler) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	switch x {
	case contract.Paper:
		return attachSim{x: x, symbol: "BTC-USD-PERP", point: func(c *Config) { c.PaperNow = clock.Now },
			engine: func(g *testGateway) *paper.Engine { return g.PaperEngine() }}
	case contract.Binance:
		s := sim.New(sim.Config{Keys: map[string]string{simMainKey: simMainSecret}, Now: clock.Now})
		url := serve(s)
		return attachSim{x: x, env: contract.Mainnet, secret: `{"apiKey":"` + simMainKey + `","apiSecret":"` + simMainSecret + `"}`,
			symbol: "BTCUSDT", point: func(c *Config) { c.Binance.MainnetURL, c.Binance.Now = url, clock.Now },
			engine: func(*testGateway) *paper.Engine { return s.Engine() }}
	case contract.Bybit:
		// The clock stands still, so a per-second quota never refills.
		quota := map[string]int{}
		for _, p := range []string{"/v5/order/create", "/v5/order/cancel", "/v5/order/cancel-all", "/v5/order/realtime",
			"/v5/order/history", "/v5/position/list", "/v5/position/set-leverage", "/v5/market/tickers", "/v5/execution/list"} {
			quota[p] = 100000
		}
		s := bybitsim.New(bybitsim.Config{Keys: map[string]string{bybitKey: bybitSecret}, Now: clock.Now, Quota: quota})
		url := serve(s)
		return attachSim{x: x, env: contract.Mainnet, secret: `{"apiKey":"` + bybitKey + `","apiSecret":"` + bybitSecret + `"}`,
			symbol: "BTCUSDT", point: func(c *Config) { c.Bybit.MainnetURL, c.Bybit.Now = url, clock.Now },
			engine: func(*testGateway) *paper.Engine { return s.Engine() }}
	case contract.OKX:
		// The connector keeps OKX's per-2-second budgets on its own clock,
		// which must run; OKX's stands 15 s ahead, within the 30 s it
		// allows a request's timestamp, for the test's length.
		clock.Advance(15 * time.Second)
		s := okxsim.New(okxsim.Config{Keys: map[string]okxsim.Key{okxKey: {Secret: okxSecret, Passphrase: okxPass}}, Now: clock.Now})
		url := serve(s)
		return attachSim{x: x, env: contract.Mainnet,
			secret: `{"apiKey":"` + okxKey + `","apiSecret":"` + okxSecret + `","passphrase":"` + okxPass + `"}`,
			symbol: "BTC-USDT-SWAP", point: func(c *Config) { c.OKX.MainnetURL = url }, legs: 1,
			engine: func(*testGateway) *paper.Engine { return s.Engine() }}
	case contract.Paradex:
		s := paradexsim.New(paradexsim.Config{Accounts: map[string]string{pdxAddress: pdxPub}, Now: clock.Now})
		url := serve(s)
		return attachSim{x: x, env: contract.Mainnet,
			secret: `{"accountAddress":"` + pdxAddress + `","starkPrivateKey":"` + pdxKey + `"}`,
			symbol: "BTC-USD-PERP", point: func(c *Config) { c.Paradex.MainnetURL, c.Paradex.Now = url+"/v1", clock.Now },
			engine: func(*testGateway) *paper.Engine { return s.Engine() }}
	case contract.Aster:
		s := astersim.New(astersim.Config{Agents: map[string]string{asterMainSigner: asterMainUser}, Now: clock.Now})
		url := serve(s)
		return attachSim{x: x, env: contract.Mainnet, secret: asterSecret(asterMainUser, asterMainKey),
			symbol: "BTCUSDT", point: func(c *Config) {
				// Without Redis the connector's nonces start from its clock
				// (microseconds): a restart on a standing clock would repeat them.
				clock.Advance(time.Second)
				var err error
				if c.Aster, err = asterLoad(url); err != nil {
					t.Fatal(err)
				}
				c.Aster.Now = clock.Now
			},
			engine: func(*testGateway) *paper.Engine { return s.Engine() }}
	case contract.Hyperliquid:
		s := hlsim.New(hlsim.Config{Seed: 7, Now: clock.Now})
		url := serve(s.Handler())
		return attachSim{x: x, env: contract.Testnet, secret: hlSecret(hlTestAccount, hlTestAgentKey, ""),
			symbol: "BTC", point: func(c *Config) { c.Hyperliquid.URL = url },
			engine: func(*testGateway) *paper.Engine { return s.Engine() },
			setup: func(t *testing.T) {
				if err := s.AddUser(hlTestAccount, decimal.NewFromInt(100000)); err != nil {
					t.Fatal(err)
				}
				s.ApproveAgent(hlTestAccount, hlAddress(t, hlTestAgentKey), false)
			}}
	}
	t.Fatalf("no simulator for %s", x)
	return attachSim{}
}

// start serves the simulator from a gateway on dir that checks attached
// entries every check; prev carries the key and credential over a restart.
// A deaf gateway follows no account feed, so no fill event places a pair.
func (s attachSim) start(t *testing.T, dir string, check time.Duration, prev *attachEnv, deaf bool) *attachEnv {
	t.Helper()
	g := startGateway(t, func(c *Config) {
		c.DataDir, c.ProtectionCheck = dir, check
		c.AccountFeeds.Disabled = deaf
		s.point(c)
	})
	e := &attachEnv{t: t, g: g, engine: s.engine(g), symbol: s.symbol, pair: s.legs}
	if e.pair == 0 {
		e.pair = 2
	}
	switch {
	case prev != nil:
		e.key, e.cred = prev.key, prev.cred
	case s.x == contract.Paper:
		e.key, e.cred = g.Bootstrap().APIKey, g.Bootstrap().CredentialID
	default:
		if s.setup != nil {
			s.setup(t)
		}
		e.key = g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive})
		if s.env == contract.Testnet {
			e.key = g.Bootstrap().APIKey
		}
		e.cred = g.newCredential(g.Bootstrap().AccountID, s.x, s.env, s.secret)
	}
	e.mcp = mustConnectMCP(t, g, "streamable", e.key)
	return e
}

func (e *attachEnv) try(body map[string]any) response {
	e.t.Helper()
	body["credentialId"] = e.cred
	return postJSON(e.g, e.key, body)
}

func (e *attachEnv) ok(body map[string]any) map[string]any {
	e.t.Helper()
	r := e.try(body)
	if r.status != http.StatusOK || r.body["success"] != true {
		e.t.Fatalf("%v: status %d body %s", body["operation"], r.status, r.raw)
	}
	delete(r.body, "success")
	return r.body
}

func (e *attachEnv) mark() decimal.Decimal {
	e.t.Helper()
	p, err := e.engine.MarkPrice(e.symbol)
	if err != nil {
		e.t.Fatal(err)
	}
	return p.Mark
}

func (e *attachEnv) setMark(p decimal.Decimal) {
	e.t.Helper()
	if _, err := e.engine.SetMarkPrice(e.symbol, p); err != nil {
		e.t.Fatal(err)
	}
}

// legs are the reduce-only orders open on BTC: the protection legs.
func (e *attachEnv) legs() []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, o := range objects(e.t, e.ok(map[string]any{"operation": "getOrders", "market": "BTC"})["orders"]) {
		if o["reduceOnly"] == true {
			out = append(out, o)
		}
	}
	return out
}

// waitLegs waits until the legs are n orders of size each (n 0: none).
func (e *attachEnv) waitLegs(what string, n int, size decimal.Decimal) []map[string]any {
	e.t.Helper()
	var got []map[string]any
	checkFor(e.t, 15*time.Second, 300*time.Millisecond, func() error {
		got = e.legs()
		if len(got) != n {
			return fmt.Errorf("%s: %d legs, want %d: %v", what, len(got), n, got)
		}
		for _, o := range got {
			if !decimal.RequireFromString(o["size"].(string)).Equal(size) {
				return fmt.Errorf("%s: leg of size %v, want %s: %v", what, o["size"], size, got)
			}
		}
		return nil
	})
	return got
}

func (e *attachEnv) flatten() {
	e.t.Helper()
	e.ok(map[string]any{"operation": "cancelAllOrders", "market": "BTC"})
	e.ok(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
	e.waitLegs("after flattening", 0, decimal.Zero)
}

var attachVenues = []contract.Exchange{contract.Paper, contract.Binance, contract.Bybit, contract.OKX, contract.Hyperliquid, contract.Paradex, contract.Aster}

// TestEntryProtection: on every venue, an entry with takeProfit/stopLoss
// is refused with the wrong side, shows its pair on dryRun (/v1 and MCP
// alike), leaves no pair when cancelled unfilled, gets a pair of the first
// part's size then of the whole as it fills in two parts, loses its
// stop-loss when the take-profit fires, gets its pair at once as a market
// entry, and still gets its pair once when the connector dies between the
// fill and the pair.
func TestEntryProtection(t *testing.T) {
	for _, x := range attachVenues {
		t.Run(string(x), func(t *testing.T) {
			t.Parallel()
			clock := testenv.NewClock(time.Now().Truncate(time.Second))
			s := newAttachSim(t, x, clock)
			dir := t.TempDir()
			e := s.start(t, dir, 300*time.Millisecond, nil, false)
			e.checkCapability()
			e.refusesWrongSide()
			e.dryRun()
			e.cancelUnfilled()
			e.twoPartFill()
			e.marketEntry()
			if err := e.g.Close(); err != nil {
				t.Fatal(err)
			}
			e.killedBetweenFillAndPair(s, dir)
		})
	}
}

func (e *attachEnv) checkCapability() {
	e.t.Helper()
	caps := e.ok(map[string]any{"operation": "getCapabilities"})
	if f, _ := caps["features"].(map[string]any); f["attachedProtection"] != "emulated" {
		e.t.Fatalf("attachedProtection %v, want emulated: %v", f["attachedProtection"], caps)
	}
}

func (e *attachEnv) refusesWrongSide() {
	e.t.Helper()
	mark := e.mark()
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"operation": "placeLimitOrder", "side": "BUY", "price": mark.Mul(decimal.RequireFromString("0.9")).StringFixed(0),
			"takeProfit": map[string]any{"triggerPrice": mark.Mul(decimal.RequireFromString("0.8")).StringFixed(0)}}, "takeProfit.triggerPrice"},
		{map[string]any{"operation": "placeMarketOrder", "side": "SELL",
			"stopLoss": map[string]any{"triggerPrice": mark.Mul(decimal.RequireFromString("0.9")).StringFixed(0)}}, "stopLoss.triggerPrice"},
		{map[string]any{"operation": "placeMarketOrder", "side": "BUY", "reduceOnly": true,
			"stopLoss": map[string]any{"triggerPrice": mark.Mul(decimal.RequireFromString("0.9")).StringFixed(0)}}, "reduceOnly"},
		{map[string]any{"operation": "placeMarketOrder", "side": "BUY", "stopLoss": map[string]any{"price": "1"}}, "stopLoss.price"},
	} {
		c.body["market"], c.body["size"] = "BTC", "0.01"
		r := e.try(c.body)
		if r.status != http.StatusBadRequest || r.code() != string(contract.CodeInvalidRequest) || !contains(string(r.raw), c.field) {
			e.t.Fatalf("%v: status %d %s, want INVALID_REQUEST naming %s", c.body, r.status, r.raw, c.field)
		}
	}
	if legs := e.legs(); len(legs) != 0 {
		e.t.Fatalf("a refused entry left orders: %v", legs)
	}
}

func (e *attachEnv) dryRun() {
	e.t.Helper()
	mark := e.mark()
	tp, sl := mark.Mul(decimal.RequireFromString("1.1")).StringFixed(0), mark.Mul(decimal.RequireFromString("0.8")).StringFixed(0)
	args := map[string]any{"market": "BTC", "side": "BUY", "size": "0.01", "dryRun": true, "clientOrderId": "dry-1",
		"takeProfit": map[string]any{"triggerPrice": tp}, "stopLoss": map[string]any{"triggerPrice": sl}}
	body := map[string]any{"operation": "placeMarketOrder"}
	for k, v := range args {
		body[k] = v
	}
	res := e.ok(body)
	args["credentialId"] = e.cred
	if mcp := e.mcp.ok("place_market_order", args); !jsonEqual(mcp, res) {
		e.t.Fatalf("dryRun over MCP %v, /v1 %v", mcp, res)
	}
	tpLeg, _ := res["takeProfit"].(map[string]any)
	slLeg, _ := res["stopLoss"].(map[string]any)
	if res["dryRun"] != true || res["type"] != "MARKET" || tpLeg == nil || slLeg == nil ||
		tpLeg["side"] != "SELL" || tpLeg["size"] != "0.01" || tpLeg["reduceOnly"] != true || !decimal.RequireFromString(tpLeg["triggerPrice"].(string)).Equal(decimal.RequireFromString(tp)) ||
		slLeg["side"] != "SELL" || !decimal.RequireFromString(slLeg["triggerPrice"].(string)).Equal(decimal.RequireFromString(sl)) {
		e.t.Fatalf("dryRun answered %v", res)
	}
	if legs := e.legs(); len(legs) != 0 {
		e.t.Fatalf("a dry run placed %v", legs)
	}
}

// cancelUnfilled: a resting entry cancelled before any fill leaves no pair.
func (e *attachEnv) cancelUnfilled() {
	e.t.Helper()
	mark := e.mark()
	args := map[string]any{"credentialId": e.cred, "market": "BTC", "side": "BUY", "size": "0.01",
		"price": mark.Mul(decimal.RequireFromString("0.9")).StringFixed(0), "takeProfit": map[string]any{"triggerPrice": mark.Mul(decimal.RequireFromString("1.1")).StringFixed(0)},
		"stopLoss": map[string]any{"triggerPrice": mark.Mul(decimal.RequireFromString("0.7")).StringFixed(0)}}
	entry := e.mcp.ok("place_limit_order", args)
	if p, _ := entry["protection"].(map[string]any); p["mode"] != "emulated" || p["tpOrderId"] != nil {
		e.t.Fatalf("a resting entry answered %v", entry)
	}
	time.Sleep(time.Second) // checks while it rests
	e.ok(map[string]any{"operation": "cancelOrder", "market": "BTC", "orderId": entry["orderId"]})
	time.Sleep(time.Second) // checks after the cancel
	if legs := e.legs(); len(legs) != 0 {
		e.t.Fatalf("a cancelled unfilled entry has legs %v", legs)
	}
}

// twoPartFill: a buy at the best ask takes that level and rests the rest;
// the pair covers the first part, then, once the rest fills, the whole.
// Then the take-profit fires and the stop-loss goes with it.
func (e *attachEnv) twoPartFill() {
	e.t.Helper()
	info, err := e.engine.Market(e.symbol)
	if err != nil {
		e.t.Fatal(err)
	}
	// The best ask on a whole price, which every venue's tick takes.
	e.setMark(e.mark().Floor().Sub(info.TickSize))
	book, err := e.engine.Orderbook(e.symbol, 1)
	if err != nil {
		e.t.Fatal(err)
	}
	ask := book.Asks[0]
	// A little more than the level holds, at the market's top leverage,
	// so the margin is there on every simulator's account.
	size := ask.Size.Add(decimal.RequireFromString("0.01")).RoundCeil(2)
	e.ok(map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": info.MaxLeverage})
	entry := e.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": size.String(),
		"price": ask.Price.String(), "clientOrderId": "two-part-" + e.cred[:8],
		"takeProfit": map[string]any{"triggerPrice": ask.Price.Mul(decimal.RequireFromString("1.2")).StringFixed(0)},
		"stopLoss":   map[string]any{"triggerPrice": ask.Price.Mul(decimal.RequireFromString("0.7")).StringFixed(0)}})
	var filled decimal.Decimal
	for _, o := range objects(e.t, e.ok(map[string]any{"operation": "getOrders", "market": "BTC"})["orders"]) {
		if o["id"] == entry["orderId"] {
			filled = decimal.RequireFromString(o["filledSize"].(string))
		}
	}
	if !filled.IsPositive() || !filled.LessThan(size) {
		e.t.Fatalf("the entry filled %s of %s at once, want a part: %v\nbook %v\norders %v", filled, size, entry, book,
			e.ok(map[string]any{"operation": "getOrders", "market": "BTC"}))
	}
	first := e.waitLegs("pair of the first part", e.pair, filled)
	e.setMark(e.mark()) // the rest fills: mark is below the entry's price
	whole := e.waitLegs("pair of the whole entry", e.pair, size)
	for _, o := range whole {
		for _, f := range first {
			if o["id"] == f["id"] {
				e.t.Fatalf("the first pair's leg %v still stands", f)
			}
		}
	}
	e.setMark(ask.Price.Mul(decimal.RequireFromString("1.25")))
	if ps := objects(e.t, e.ok(map[string]any{"operation": "getPositions", "market": "BTC"})["positions"]); len(ps) != 0 {
		e.t.Fatalf("the take-profit did not close the position: %v", ps)
	}
	e.waitLegs("the stop-loss after its take-profit fired", 0, decimal.Zero)
	e.setMark(ask.Price)
}

// marketEntry: the pair stands when the answer comes.
func (e *attachEnv) marketEntry() {
	e.t.Helper()
	mark := e.mark()
	entry := func() map[string]any {
		return e.ok(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "SELL", "size": "0.01",
			"clientOrderId": "market-entry-1",
			"takeProfit":    map[string]any{"triggerPrice": mark.Mul(decimal.RequireFromString("0.8")).StringFixed(0)},
			"stopLoss":      map[string]any{"triggerPrice": mark.Mul(decimal.RequireFromString("1.3")).StringFixed(0)}})
	}
	res := entry()
	p, _ := res["protection"].(map[string]any)
	if p == nil || p["size"] != "0.01" || p["tpOrderId"] == nil || p["slOrderId"] == nil {
		e.t.Fatalf("market entry answered %v", res)
	}
	legs := e.legs()
	if len(legs) != e.pair {
		e.t.Fatalf("legs right after the market entry: %v", legs)
	}
	for _, o := range legs {
		if o["side"] != "BUY" || o["size"] != "0.01" || (o["id"] != p["tpOrderId"] && o["id"] != p["slOrderId"]) {
			e.t.Fatalf("leg %v does not match %v", o, p)
		}
	}
	// A retry answers the first placement and places no second pair.
	if again := entry(); !jsonEqual(again, res) {
		e.t.Fatalf("retry answered %v, first %v", again, res)
	}
	time.Sleep(time.Second) // checks after the retry
	if again := e.legs(); !jsonEqual(again, legs) {
		e.t.Fatalf("legs after the retry %v, before %v", again, legs)
	}
	e.flatten()
}

// killedBetweenFillAndPair: a gateway that never checks (an hour between
// checks, no account feed to hear the fill on) takes the entry, the entry
// fills, the gateway stops; the next one places the pair once.
func (e *attachEnv) killedBetweenFillAndPair(s attachSim, dir string) {
	e.t.Helper()
	dead := s.start(e.t, dir, time.Hour, e, true)
	mark := dead.mark()
	price := mark.Mul(decimal.RequireFromString("0.99")).Floor()
	dead.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": price.String(),
		"takeProfit": map[string]any{"triggerPrice": mark.Mul(decimal.RequireFromString("1.2")).StringFixed(0)},
		"stopLoss":   map[string]any{"triggerPrice": mark.Mul(decimal.RequireFromString("0.7")).StringFixed(0)}})
	dead.setMark(price.Sub(decimal.RequireFromString("1")))
	if ps := objects(e.t, dead.ok(map[string]any{"operation": "getPositions", "market": "BTC"})["positions"]); len(ps) != 1 {
		e.t.Fatalf("the entry did not fill: %v", ps)
	}
	if legs := dead.legs(); len(legs) != 0 {
		e.t.Fatalf("the pair stood before the restart: %v", legs)
	}
	if err := dead.g.Close(); err != nil {
		e.t.Fatal(err)
	}
	next := s.start(e.t, dir, 300*time.Millisecond, e, false)
	legs := next.waitLegs("pair after the restart", next.pair, decimal.RequireFromString("0.01"))
	time.Sleep(1500 * time.Millisecond) // five more checks
	if again := next.legs(); !jsonEqual(again, legs) {
		e.t.Fatalf("legs changed after the pair was placed: %v then %v", legs, again)
	}
}
