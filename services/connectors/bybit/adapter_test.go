package bybit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/bybit/sim"
	"github.com/shopspring/decimal"
)

const (
	testKey    = "test-api-key"
	testSecret = "test-api-secret"
)

// fixture is an adapter wired to a simulator over HTTP.
type fixture struct {
	sim  *sim.Server
	a    *Adapter
	cred connector.Credential

	mu    sync.Mutex
	waits []time.Duration
}

func newFixture(t *testing.T, simCfg sim.Config, now func() time.Time) *fixture {
	t.Helper()
	simCfg.Keys = map[string]string{testKey: testSecret}
	s := sim.New(simCfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.MainnetURL, cfg.TestnetURL, cfg.DemoURL, cfg.Now = srv.URL, srv.URL, srv.URL, now
	f := &fixture{sim: s, a: NewAdapter(cfg, srv.Client()), cred: credential(contract.Mainnet, testKey, testSecret, false)}
	f.a.c.Wait = func(ctx context.Context, d time.Duration) error {
		f.mu.Lock()
		f.waits = append(f.waits, d)
		f.mu.Unlock()
		return connector.SleepContext(ctx, d)
	}
	return f
}

func (f *fixture) market(t *testing.T, native string) connector.Market {
	t.Helper()
	list, err := f.a.Markets(context.Background(), f.cred)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.Native == native {
			return m
		}
	}
	t.Fatalf("no market %s in %v", native, list)
	return connector.Market{}
}

var d = decimal.RequireFromString

func limit(m connector.Market, side contract.Side, size, price, id string) connector.OrderRequest {
	return connector.OrderRequest{Market: m, Type: connector.Limit, Side: side, Size: d(size), Price: d(price), ClientOrderID: id}
}

func TestMarketsKeepUSDTPerpetuals(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	list, err := f.a.Markets(context.Background(), f.cred)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]connector.Market{}
	for _, m := range list {
		got[m.Native] = m
	}
	if len(got) != 3 || got["BTCPERP"].Native != "" || got["BTCUSDT-26DEC25"].Native != "" {
		t.Fatalf("markets %v: want the three USDT perpetuals, no USDC perpetual, no dated future", got)
	}
	btc, pepe := got["BTCUSDT"], got["1000PEPEUSDT"]
	if btc.Canonical != "BTC-USDT-PERP" || !btc.TickSize.Equal(d("0.1")) || !btc.LotSize.Equal(d("0.001")) || !btc.MinNotional.Equal(d("5")) || btc.MaxLeverage != 100 {
		t.Errorf("BTCUSDT: %+v", btc)
	}
	if pepe.Canonical != "1000PEPE-USDT-PERP" || pepe.Base != "PEPE" || pepe.Multiplier != 1000 {
		t.Errorf("1000PEPEUSDT: %+v", pepe)
	}
}

func TestMarketData(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	book, err := f.a.GetOrderbook(ctx, f.cred, m, 5)
	if err != nil || len(book.Bids) != 5 || len(book.Asks) != 5 || !book.Bids[0][0].LessThan(book.Asks[0][0]) {
		t.Fatalf("book %+v, %v", book, err)
	}
	mark, err := f.a.GetMarkPrice(ctx, f.cred, m)
	if err != nil || !mark.MarkPrice.IsPositive() || !mark.IndexPrice.IsPositive() {
		t.Fatalf("mark %+v, %v", mark, err)
	}
	for _, iv := range []int{1, 60, 1440} {
		c, err := f.a.GetCandles(ctx, f.cred, m, iv, 5)
		if err != nil || len(c.Candles) != 5 {
			t.Fatalf("candles %d: %+v, %v", iv, c, err)
		}
		for i := 1; i < len(c.Candles); i++ {
			if c.Candles[i].Time-c.Candles[i-1].Time != int64(iv*60) {
				t.Fatalf("candles %d not oldest first, %d s apart: %+v", iv, iv*60, c.Candles)
			}
		}
	}
	if _, err := f.a.GetCandles(ctx, f.cred, m, 2, 5); err == nil {
		t.Error("2-minute candles accepted")
	}
	fr, err := f.a.GetFundingRate(ctx, f.cred, m)
	if err != nil || fr.NextFundingTime < time.Now().Unix() || fr.NextFundingTime > time.Now().Add(9*time.Hour).Unix() {
		t.Fatalf("funding %+v, %v", fr, err)
	}
	all, err := f.a.GetMarketsWithFunding(ctx, f.cred)
	if err != nil || len(all.Markets) != 3 {
		t.Fatalf("markets with funding %+v, %v", all, err)
	}
	fee, err := f.a.GetFeeInfo(ctx, f.cred, m)
	if err != nil || !fee.TakerFee.IsPositive() || fee.MakerFee.GreaterThan(fee.TakerFee) {
		t.Fatalf("fee %+v, %v", fee, err)
	}
}

func TestTradingRoundTrip(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	bal, err := f.a.GetBalance(ctx, f.cred)
	if err != nil || !bal.Equity.IsPositive() || !bal.FreeCollateral.IsPositive() {
		t.Fatalf("balance %+v, %v", bal, err)
	}

	// A market buy: filled size, average price and fee come from executions.
	mo, err := f.a.PlaceMarketOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.MarketType, Side: contract.Buy, Size: d("0.01"), ClientOrderID: "mkt-1"})
	if err != nil || !mo.FilledSize.Equal(d("0.01")) || !mo.FilledPrice.IsPositive() || !mo.Fee.IsPositive() || mo.OrderID == "" {
		t.Fatalf("market order %+v, %v", mo, err)
	}
	pos, err := f.a.GetPositions(ctx, f.cred, nil)
	if err != nil || len(pos.Positions) != 1 || pos.Positions[0].Side != contract.Long || !pos.Positions[0].Size.Equal(d("0.01")) {
		t.Fatalf("positions %+v, %v", pos, err)
	}
	f.sim.AddFunding(testKey, "BTCUSDT", d("0.05"))
	fills, err := f.a.GetFills(ctx, f.cred, m, 10)
	if err != nil || len(fills.Fills) != 1 || fills.Fills[0].OrderID != mo.OrderID || !fills.Fills[0].Fee.Equal(mo.Fee) {
		t.Fatalf("fills %+v, %v: want the one trade, no funding row", fills, err)
	}

	// A resting limit order, a stop and protection.
	lo, err := f.a.PlaceLimitOrder(ctx, f.cred, limit(m, contract.Buy, "0.01", mark.MarkPrice.Mul(d("0.9")).Round(1).String(), "lim-1"))
	if err != nil || lo.Status != contract.StatusOpen {
		t.Fatalf("limit %+v, %v", lo, err)
	}
	so, err := f.a.PlaceStopOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Stop, Side: contract.Sell, Size: d("0.01"),
		TriggerPrice: mark.MarkPrice.Mul(d("0.8")).Round(1), Mark: mark.MarkPrice, ReduceOnly: true, ClientOrderID: "stop-1"})
	if err != nil || so.Status != contract.StatusPending {
		t.Fatalf("stop %+v, %v", so, err)
	}
	tp, sl := mark.MarkPrice.Mul(d("1.1")).Round(1), mark.MarkPrice.Mul(d("0.9")).Round(1)
	pr, err := f.a.PlaceProtectionOrders(ctx, f.cred, connector.ProtectionRequest{Market: m, PositionSide: contract.Long, Size: d("0.01"),
		TakeProfit: &tp, StopLoss: &sl, ClientOrderID: "prot-1"})
	if err != nil || pr.TPOrderID == "" || pr.SLOrderID == "" {
		t.Fatalf("protection %+v, %v", pr, err)
	}
	orders, err := f.a.GetOrders(ctx, f.cred, &m)
	if err != nil || len(orders.Orders) != 4 {
		t.Fatalf("orders %+v, %v", orders, err)
	}
	kinds := map[string]contract.Order{}
	for _, o := range orders.Orders {
		kinds[o.ClientOrderID] = o
	}
	if kinds["lim-1"].Type != "LIMIT" || kinds["stop-1"].Type != "STOP_MARKET" || kinds["prot-1-tp"].Type != "TAKE_PROFIT_MARKET" ||
		kinds["prot-1-sl"].Status != contract.StatusPending || kinds["prot-1-tp"].TriggerPrice == nil || !kinds["prot-1-tp"].TriggerPrice.Equal(tp) {
		t.Fatalf("orders by client id: %+v", kinds)
	}
	found, ok, err := f.a.FindOrder(ctx, f.cred, m, "mkt-1")
	if err != nil || !ok || found.Status != contract.StatusFilled || !found.AvgPrice.Equal(mo.FilledPrice) || !found.Fee.Equal(mo.Fee) {
		t.Fatalf("FindOrder(mkt-1) = %+v, %v, %v", found, ok, err)
	}
	if _, ok, err := f.a.FindOrder(ctx, f.cred, m, "never-placed"); ok || err != nil {
		t.Fatalf("FindOrder(never-placed) = %v, %v", ok, err)
	}

	if err := f.a.CancelOrder(ctx, f.cred, lo.OrderID, nil); err != nil {
		t.Fatalf("cancel without market: %v", err)
	}
	testenv.WantUpstream(t, f.a.CancelOrder(ctx, f.cred, lo.OrderID, &m), contract.ReasonOrderNotFound)
	n, err := f.a.CancelAllOrders(ctx, f.cred, m)
	if err != nil || n != 3 {
		t.Fatalf("cancel all: %d, %v; want 3 (stop, TP, SL)", n, err)
	}
	closed, err := f.a.CloseAllPositions(ctx, f.cred, m)
	if err != nil || !closed.ClosedSize.Equal(d("0.01")) || !closed.AvgClosePrice.IsPositive() {
		t.Fatalf("close all %+v, %v", closed, err)
	}
	if pos, _ := f.a.GetPositions(ctx, f.cred, &m); len(pos.Positions) != 0 {
		t.Fatalf("position left: %+v", pos)
	}
}

// TestPostOnly: a post-only order that would take is accepted, then
// cancelled by Bybit; read back after Bybit's intake, it is
// POST_ONLY_REJECTED, and a slow but valid one stays OPEN.
func TestPostOnly(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	taker := limit(m, contract.Buy, "0.01", mark.MarkPrice.Mul(d("1.05")).Round(1).String(), "po-take")
	taker.PostOnly = true
	f.sim.LagReads(2) // not visible for the first two reads
	_, err := f.a.PlaceLimitOrder(ctx, f.cred, taker)
	testenv.WantUpstream(t, err, contract.ReasonPostOnlyRejected)

	maker := limit(m, contract.Buy, "0.01", mark.MarkPrice.Mul(d("0.95")).Round(1).String(), "po-make")
	maker.PostOnly = true
	f.sim.LagReads(len(readWaits)) // never visible within the reads
	start := time.Now()
	res, err := f.a.PlaceLimitOrder(ctx, f.cred, maker)
	if err != nil || res.Status != contract.StatusOpen || res.OrderID == "" {
		t.Fatalf("slow post-only maker: %+v, %v", res, err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("read back took %v, want under 1 s", el)
	}
	found, ok, err := f.a.FindOrder(ctx, f.cred, m, "po-take")
	if err != nil || !ok || found.Status != contract.StatusRejected {
		t.Fatalf("FindOrder(po-take) = %+v, %v, %v; want REJECTED", found, ok, err)
	}
}

// TestBatchOfTen: ten orders are one create-batch call; one refused in the
// middle is reported alone, in request order.
func TestBatchOfTen(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	var in []connector.OrderRequest
	for i := range 10 {
		in = append(in, limit(m, contract.Buy, "0.001", mark.MarkPrice.Mul(d("0.9")).Round(1).String(), "b-"+strconv.Itoa(i)))
	}
	in[4].Size = d("100000") // far beyond the margin
	before := f.sim.Hits(http.MethodPost, "/v5/order/create-batch")
	res, err := f.a.PlaceBatchOrder(ctx, f.cred, in)
	if err != nil || len(res) != 10 {
		t.Fatalf("batch: %+v, %v", res, err)
	}
	if got := f.sim.Hits(http.MethodPost, "/v5/order/create-batch") - before; got != 1 {
		t.Fatalf("%d create-batch calls for 10 orders, want 1", got)
	}
	for i, r := range res {
		if i == 4 {
			if r.Status != contract.StatusRejected || r.Error == nil || r.Error.Reason != contract.ReasonInsufficientMargin {
				t.Errorf("order 4: %+v, want REJECTED INSUFFICIENT_MARGIN", r)
			}
			continue
		}
		if r.Status != contract.StatusOpen || r.OrderID == "" {
			t.Errorf("order %d: %+v", i, r)
		}
	}
}

func TestCredentialsAndEnvironments(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	if ok, err := f.a.TestCredentials(ctx, f.cred); !ok || err != nil {
		t.Fatalf("good credential: %v, %v", ok, err)
	}
	if ok, err := f.a.TestCredentials(ctx, credential(contract.Mainnet, testKey, "wrong-secret", false)); ok || !connector.IsRejected(err) {
		t.Fatalf("wrong secret: %v, %v; want valid:false", ok, err)
	}
	if ok, err := f.a.TestCredentials(ctx, credential(contract.Mainnet, "unknown-key", testSecret, false)); ok || !connector.IsRejected(err) {
		t.Fatalf("unknown key: %v, %v; want valid:false", ok, err)
	}

	// Three hosts: a testnet credential goes to testnet, one marked demo to
	// the demo host, which has no API-key endpoint (account/info instead).
	hosts := map[string]*sim.Server{}
	cfg := DefaultConfig()
	for _, env := range []string{"main", "test", "demo"} {
		s := sim.New(sim.Config{Keys: map[string]string{testKey: testSecret}, Demo: env == "demo"})
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		hosts[env] = s
		switch env {
		case "main":
			cfg.MainnetURL = srv.URL
		case "test":
			cfg.TestnetURL = srv.URL
		default:
			cfg.DemoURL = srv.URL
		}
	}
	a := NewAdapter(cfg, nil)
	for _, tt := range []struct {
		env  contract.Environment
		demo bool
		host string
	}{{contract.Mainnet, false, "main"}, {contract.Mainnet, true, "main"}, {contract.Testnet, false, "test"}, {contract.Testnet, true, "demo"}} {
		before := hosts[tt.host].TotalHits()
		c := credential(tt.env, testKey, testSecret, tt.demo)
		if ok, err := a.TestCredentials(ctx, c); !ok || err != nil {
			t.Fatalf("%s demo=%v: %v, %v", tt.env, tt.demo, ok, err)
		}
		if hosts[tt.host].TotalHits() == before {
			t.Errorf("%s demo=%v did not reach the %s host", tt.env, tt.demo, tt.host)
		}
	}
	demo := credential(contract.Testnet, testKey, testSecret, true)
	if hosts["demo"].Hits(http.MethodGet, "/v5/account/info") == 0 || hosts["demo"].Hits(http.MethodGet, "/v5/user/query-api") != 0 {
		t.Error("the demo credential was not tested with account/info")
	}
	list, _ := a.Markets(ctx, demo)
	_, err := a.GetFeeInfo(ctx, demo, list[0])
	if ce, ok := contract.AsError(err); !ok || ce.Reason != contract.ReasonPermissionDenied {
		t.Errorf("fee info on demo: %v", err)
	}
}

// TestClockSkew: a machine clock 30 s off either way still signs requests
// Bybit accepts, because the offset is measured from /v5/market/time.
func TestClockSkew(t *testing.T) {
	for _, skew := range []time.Duration{30 * time.Second, -30 * time.Second} {
		f := newFixture(t, sim.Config{}, func() time.Time { return time.Now().Add(skew) })
		if _, err := f.a.GetBalance(context.Background(), f.cred); err != nil {
			t.Fatalf("clock %v off: %v", skew, err)
		}
	}
}

// TestQuotaSlowsBeforeBybitRefuses: with 3 creates a second allowed, five
// in a row wait for the reset Bybit announced instead of drawing 10006.
func TestQuotaSlowsBeforeBybitRefuses(t *testing.T) {
	f := newFixture(t, sim.Config{Quota: map[string]int{"/v5/order/create": 3}}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	for i := range 5 {
		if _, err := f.a.PlaceLimitOrder(ctx, f.cred, limit(m, contract.Buy, "0.001", mark.MarkPrice.Mul(d("0.9")).Round(1).String(), "q-"+strconv.Itoa(i))); err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	waited := false
	for _, w := range f.waits {
		waited = waited || w > 100*time.Millisecond
	}
	if !waited {
		t.Fatalf("no wait for the quota: %v", f.waits)
	}
}

// TestRateLimitedAnswer: 10006 is UPSTREAM_RATE_LIMITED with a retry time.
func TestRateLimitedAnswer(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	f.sim.FailNext(http.MethodGet, "/v5/account/wallet-balance", sim.Failure{RetCode: 10006, RetMsg: "Too many visits!"})
	_, err := f.a.GetBalance(context.Background(), f.cred)
	if ce := testenv.WantUpstream(t, err, contract.ReasonUpstreamRateLimited); ce.RetryAfterSeconds < 1 {
		t.Fatalf("retry after %d", ce.RetryAfterSeconds)
	}
	f.sim.FailNext(http.MethodGet, "/v5/account/wallet-balance", sim.Failure{Status: http.StatusForbidden})
	_, err = f.a.GetBalance(context.Background(), f.cred)
	if ce := testenv.WantUpstream(t, err, contract.ReasonUpstreamRateLimited); ce.RetryAfterSeconds != 600 {
		t.Fatalf("403: retry after %d, want 600", ce.RetryAfterSeconds)
	}
}

func TestHedgeModeRefused(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	m := f.market(t, "BTCUSDT")
	f.sim.SetHedgeMode(testKey, true)
	_, err := f.a.PlaceLimitOrder(context.Background(), f.cred, limit(m, contract.Buy, "0.01", "50000", "h-1"))
	if ce, ok := contract.AsError(err); !ok || ce.Code != contract.CodeInvalidRequest || f.sim.Hits(http.MethodPost, "/v5/order/create") != 0 {
		t.Fatalf("hedge mode: %v", err)
	}
}

// TestSetLeverageCrossMargin: Bybit's margin mode belongs to the whole
// unified account (ISOLATED_MARGIN, REGULAR_MARGIN i.e. cross,
// PORTFOLIO_MARGIN: https://bybit-exchange.github.io/docs/v5/account/set-margin-mode),
// so setLeverage never switches it: in cross it sets the leverage, in
// isolated or portfolio margin it refuses, saying what to change and where,
// and the account's mode stays as it was.
func TestSetLeverageCrossMargin(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	for range 2 { // the second time 110043 (not modified) is success
		if lev, err := f.a.SetLeverage(ctx, f.cred, m, 20); err != nil || lev != 20 {
			t.Fatalf("set leverage: %d, %v", lev, err)
		}
	}
	for _, mode := range []string{"ISOLATED_MARGIN", "PORTFOLIO_MARGIN"} {
		f.sim.SetMarginMode(testKey, mode)
		_, err := f.a.SetLeverage(ctx, f.cred, m, 5)
		ce, ok := contract.AsError(err)
		if !ok || ce.Code != contract.CodeInvalidRequest || !strings.Contains(ce.Message, "account-wide") ||
			!strings.Contains(ce.Message, mode) || !strings.Contains(ce.Message, "Cross Margin") {
			t.Fatalf("setLeverage in %s: %v, want INVALID_REQUEST saying what to change", mode, err)
		}
		if got := f.sim.MarginMode(testKey); got != mode {
			t.Fatalf("margin mode %s after a refused setLeverage, want %s unchanged", got, mode)
		}
	}
	if n := f.sim.Hits(http.MethodPost, "/v5/account/set-margin-mode"); n != 0 {
		t.Fatalf("set-margin-mode called %d times, want never", n)
	}
}

func TestClientOrderIDCharset(t *testing.T) {
	for id, ok := range map[string]bool{
		"abc-DEF_123": true, "0123456789abcdef0123456789abcdef0123": true, "0123456789abcdef0123456789abcdef01234": false,
		"has space": false, "dot.dot": false, "": false, "550e8400-e29b-41d4-a716-446655440000": true,
	} {
		if err := checkClientID(id); (err == nil) != ok {
			t.Errorf("checkClientID(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}
