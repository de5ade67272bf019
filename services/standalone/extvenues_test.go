package standalone

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	hlsim "github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	okxsim "github.com/perpgate/perpgate/services/connectors/okx/sim"
	paradexsim "github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/shopspring/decimal"
)

// The extension operations on each venue, against its simulator, over
// /v1 and MCP (venueExt). Each simulator answers two entries a history
// page, so the connectors page.

// TestBinanceExtensions: funding from GET /fapi/v1/income FUNDING_FEE
// (no rate or size there); realizedPnl from userTrades.
func TestBinanceExtensions(t *testing.T) {
	clock := testenv.NewClock(nextFunding(time.Now(), 8*time.Hour).Add(-time.Minute))
	b := startBinanceAt(t, sim.Config{PageCap: 2}, clock.Now)
	venueExt{x: contract.Binance, g: b.testGateway, key: b.live, cred: b.mainCred, engine: b.sim.Engine(), acct: simMainKey,
		clock: clock, interval: 8 * time.Hour, market: "BTC", size: "0.01", places: 8, pnl: true}.run(t)
}

// TestBybitExtensions: funding from GET /v5/account/transaction-log
// SETTLEMENT with rate and size; the execution list has no realized PnL,
// so fills leave it out.
func TestBybitExtensions(t *testing.T) {
	clock := testenv.NewClock(nextFunding(time.Now(), 8*time.Hour).Add(-time.Minute))
	// Without since the connector reads 13 weekly windows a call: room for
	// the test's calls in the simulator's per-second quota.
	b := startBybit(t, bybitsim.Config{PageCap: 2, Quota: map[string]int{"/v5/account/transaction-log": 1000}}, clock.Now)
	venueExt{x: contract.Bybit, g: b.testGateway, key: b.live, cred: b.mainCred, engine: b.sim.Engine(), acct: bybitKey,
		clock: clock, interval: 8 * time.Hour, market: "BTC", size: "0.01", detail: true}.run(t)
}

// TestOKXExtensions: funding from bills-archive type 8 (no rate or size
// there); realizedPnl from the fills' fillPnl.
func TestOKXExtensions(t *testing.T) {
	clock := testenv.NewClock(nextFunding(time.Now(), 8*time.Hour).Add(-time.Minute))
	// The connector keeps OKX's per-2-second request budgets on this
	// clock: let it tick so the test's calls find room.
	tick := func() time.Time { clock.Advance(500 * time.Millisecond); return clock.Now() }
	o := startOKX(t, okxsim.Config{PageCap: 2}, tick)
	venueExt{x: contract.OKX, g: o.testGateway, key: o.live, cred: o.mainCred, engine: o.sim.Engine(), acct: okxKey,
		clock: clock, interval: 8 * time.Hour, market: "BTC", size: "0.01", pnl: true}.run(t)
}

// TestHyperliquidExtensions: funding from userFunding (hourly, with rate
// and size); realizedPnl from the fills' closedPnl.
func TestHyperliquidExtensions(t *testing.T) {
	clock := testenv.NewClock(nextFunding(time.Now(), time.Hour).Add(-time.Minute))
	s := hlsim.New(hlsim.Config{Seed: 7, Now: clock.Now, PageCap: 4})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	// The test reads funding a dozen times a few seconds apart: more
	// weight than the venue's 1200 a minute.
	g := startGateway(t, func(c *Config) { c.Hyperliquid.URL, c.Hyperliquid.WeightPerMinute = srv.URL, 12000 })
	if err := s.AddUser(hlTestAccount, decimal.NewFromInt(100000)); err != nil {
		t.Fatal(err)
	}
	s.ApproveAgent(hlTestAccount, hlAddress(t, hlTestAgentKey), false)
	cred := g.newCredential(g.Bootstrap().AccountID, contract.Hyperliquid, contract.Testnet, hlSecret(hlTestAccount, hlTestAgentKey, ""))
	venueExt{x: contract.Hyperliquid, g: g, key: g.Bootstrap().APIKey, cred: cred, engine: s.Engine(), acct: strings.ToLower(hlTestAccount),
		clock: clock, interval: time.Hour, market: "BTC", size: "0.01", detail: true, pnl: true}.run(t)
}

// TestParadexExtensions: funding from GET /funding/payments (per market;
// no rate or size there); realizedPnl from the fills' realized_pnl.
func TestParadexExtensions(t *testing.T) {
	clock := testenv.NewClock(nextFunding(time.Now(), 8*time.Hour).Add(-time.Minute))
	p := startParadex(t, paradexsim.Config{PageCap: 1}, clock.Now)
	venueExt{x: contract.Paradex, g: p.testGateway, key: p.live, cred: p.mainCred, engine: p.sim.Engine(), acct: pdxAddress,
		clock: clock, interval: 8 * time.Hour, market: "BTC", size: "0.01", pnl: true}.run(t)
}
