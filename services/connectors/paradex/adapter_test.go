package paradex

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
	"github.com/shopspring/decimal"
)

const (
	testAddress = "0x129c135ed63df9353885e292be4426b8ed6122b13c6c0e1bb787288a1f5adfa"
	testKey     = "0x543b6cf6c91817a87174aaea4fb370ac1c694e864d7740d728f8344d53e815"
	testPub     = "0x2c144d2f2d4fc61b6f8967f3ba0012a87d90140bcfe5a3e92e8df83258c960f"
	otherKey    = "0x2df9494fb7408922820789bb930a61fc246e8d20206e161cd6576b5c48f8c5b"
)

// clock is a movable clock shared by the adapter and the simulator.
// clock is the wall clock moved by advance, or stopped by freeze (the
// price walk then holds still).
type clock struct{ off, frozen atomic.Int64 }

func (c *clock) now() time.Time {
	if f := c.frozen.Load(); f != 0 {
		return time.Unix(0, f).Add(time.Duration(c.off.Load()))
	}
	return time.Now().Add(time.Duration(c.off.Load()))
}
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }
func (c *clock) freeze()                 { c.frozen.Store(time.Now().UnixNano()) }

// fixture is an adapter wired to a simulator over HTTP.
type fixture struct {
	sim   *sim.Server
	a     *Adapter
	cred  connector.Credential
	clock *clock
}

func newFixture(t *testing.T, simCfg sim.Config) *fixture {
	t.Helper()
	ck := &clock{}
	simCfg.Now = ck.now
	simCfg.Accounts = map[string]string{testAddress: testPub}
	s := sim.New(simCfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.MainnetURL, cfg.TestnetURL, cfg.Now = srv.URL+"/v1", srv.URL+"/v1", ck.now
	return &fixture{sim: s, a: NewAdapter(cfg, srv.Client()), cred: credential("cred-1", testAddress, testKey), clock: ck}
}

func credential(id, addr, key string) connector.Credential {
	raw, _ := json.Marshal(map[string]string{"accountAddress": addr, "starkPrivateKey": key})
	return connector.Credential{CredentialInfo: contract.CredentialInfo{ID: id, Exchange: contract.Paradex, Environment: contract.Mainnet},
		Secret: contract.Secret(raw)}
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

func wantReason(t *testing.T, err error, reason contract.Reason) *contract.Error {
	t.Helper()
	ce, ok := contract.AsError(err)
	if err == nil || !ok || ce.Code != contract.CodeExchangeError || ce.Reason != reason {
		t.Fatalf("want EXCHANGE_ERROR %s, got %v", reason, err)
	}
	return ce
}

var d = decimal.RequireFromString

func limit(m connector.Market, side contract.Side, size, price string, id string) connector.OrderRequest {
	return connector.OrderRequest{Market: m, Type: connector.Limit, Side: side, Size: d(size), Price: d(price), ClientOrderID: id}
}

func TestMarketsKeepPerpetualsWithMultipliers(t *testing.T) {
	f := newFixture(t, sim.Config{})
	list, err := f.a.Markets(context.Background(), f.cred)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]connector.Market{}
	for _, m := range list {
		got[m.Native] = m
	}
	if len(got) != 4 || got["BTC-USD-96000-C"].Native != "" {
		t.Fatalf("markets %v: want the four perpetuals, no option", got)
	}
	btc, pepe, sats := got["BTC-USD-PERP"], got["kPEPE-USD-PERP"], got["mSATS-USD-PERP"]
	if btc.Canonical != "BTC-USD-PERP" || !btc.TickSize.Equal(d("0.1")) || !btc.LotSize.Equal(d("0.00001")) || !btc.MinNotional.Equal(d("10")) || btc.MaxLeverage != 50 {
		t.Errorf("BTC: %+v", btc)
	}
	if pepe.Canonical != "1000PEPE-USD-PERP" || pepe.Base != "PEPE" || pepe.Multiplier != 1000 {
		t.Errorf("kPEPE: %+v", pepe)
	}
	if sats.Canonical != "1000000SATS-USD-PERP" || sats.Base != "SATS" || sats.Multiplier != 1_000_000 {
		t.Errorf("mSATS: %+v", sats)
	}
}

func TestMarketData(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	m := f.market(t, "BTC-USD-PERP")
	book, err := f.a.GetOrderbook(ctx, f.cred, m, 5)
	if err != nil || len(book.Bids) != 5 || len(book.Asks) != 5 || !book.Bids[0][0].LessThan(book.Asks[0][0]) {
		t.Fatalf("book %+v, %v", book, err)
	}
	mark, err := f.a.GetMarkPrice(ctx, f.cred, m)
	if err != nil || !mark.MarkPrice.IsPositive() || !mark.IndexPrice.IsPositive() {
		t.Fatalf("mark %+v, %v", mark, err)
	}
	for _, iv := range []int{1, 60, 240, 1440} {
		c, err := f.a.GetCandles(ctx, f.cred, m, iv, 5)
		if err != nil || len(c.Candles) != 5 {
			t.Fatalf("candles %d: %+v, %v", iv, c, err)
		}
		for i, cd := range c.Candles {
			if cd.Time%int64(iv*60) != 0 {
				t.Fatalf("candle %d of %d min starts at %d, not on a UTC boundary", i, iv, cd.Time)
			}
			if i > 0 && cd.Time-c.Candles[i-1].Time != int64(iv*60) {
				t.Fatalf("candles %d not oldest first, %d s apart: %+v", iv, iv*60, c.Candles)
			}
		}
	}
	if _, err := f.a.GetCandles(ctx, f.cred, m, 2, 5); err == nil {
		t.Error("2-minute candles accepted")
	}
	fr, err := f.a.GetFundingRate(ctx, f.cred, m)
	next := f.clock.now().UTC().Truncate(time.Hour).Add(time.Hour).Unix()
	if err != nil || fr.NextFundingTime != next {
		t.Fatalf("funding %+v, %v; want nextFundingTime %d (next whole hour)", fr, err, next)
	}
	iv, hourly, err := f.a.FundingHours(ctx, f.cred, m.Native, d("0.0008"))
	if err != nil || iv != 8 || !hourly.Equal(d("0.0001")) {
		t.Fatalf("funding hours %d, hourly %s, %v", iv, hourly, err)
	}
	all, err := f.a.GetMarketsWithFunding(ctx, f.cred)
	if err != nil || len(all.Markets) != 4 {
		t.Fatalf("markets with funding %+v, %v", all, err)
	}
	fee, err := f.a.GetFeeInfo(ctx, f.cred, m)
	if err != nil || !fee.TakerFee.Equal(d("3")) || !fee.MakerFee.Equal(d("0.5")) {
		t.Fatalf("fee %+v, %v", fee, err)
	}
}

// TestTradingRoundTrip runs every trading operation against the simulator.
func TestTradingRoundTrip(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	m := f.market(t, "BTC-USD-PERP")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	bal, err := f.a.GetBalance(ctx, f.cred)
	if err != nil || !bal.Equity.IsPositive() || !bal.FreeCollateral.IsPositive() {
		t.Fatalf("balance %+v, %v", bal, err)
	}
	if lev, err := f.a.SetLeverage(ctx, f.cred, m, 20); err != nil || lev != 20 {
		t.Fatalf("set leverage %d, %v", lev, err)
	}

	mo, err := f.a.PlaceMarketOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.MarketType, Side: contract.Buy, Size: d("0.01"), ClientOrderID: "mkt-1"})
	if err != nil || !mo.FilledSize.Equal(d("0.01")) || !mo.FilledPrice.IsPositive() || !mo.Fee.IsPositive() || len(mo.OrderID) != 28 {
		t.Fatalf("market order %+v, %v", mo, err)
	}
	pos, err := f.a.GetPositions(ctx, f.cred, nil)
	if err != nil || len(pos.Positions) != 1 || pos.Positions[0].Side != contract.Long || !pos.Positions[0].Size.Equal(d("0.01")) || !pos.Positions[0].MarkPrice.IsPositive() {
		t.Fatalf("positions %+v, %v", pos, err)
	}
	fills, err := f.a.GetFills(ctx, f.cred, m, 10)
	if err != nil || len(fills.Fills) != 1 || fills.Fills[0].OrderID != mo.OrderID || !fills.Fills[0].Fee.Equal(mo.Fee) {
		t.Fatalf("fills %+v, %v", fills, err)
	}

	lo, err := f.a.PlaceLimitOrder(ctx, f.cred, limit(m, contract.Buy, "0.01", mark.MarkPrice.Mul(d("0.9")).Round(1).String(), "lim-1"))
	if err != nil || lo.Status != contract.StatusOpen {
		t.Fatalf("limit %+v, %v", lo, err)
	}
	so, err := f.a.PlaceStopOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Stop, Side: contract.Sell, Size: d("0.01"),
		TriggerPrice: mark.MarkPrice.Mul(d("0.8")).Round(1), ReduceOnly: true, ClientOrderID: "stop-1"})
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
		kinds["prot-1-sl"].Type != "STOP_LOSS_MARKET" || kinds["prot-1-sl"].Status != contract.StatusPending ||
		kinds["prot-1-tp"].TriggerPrice == nil || !kinds["prot-1-tp"].TriggerPrice.Equal(tp) || !kinds["prot-1-sl"].ReduceOnly {
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
	wantReason(t, f.a.CancelOrder(ctx, f.cred, lo.OrderID, &m), contract.ReasonOrderNotFound)
	if ce, ok := contract.AsError(f.a.CancelOrder(ctx, f.cred, "not-an-id", nil)); !ok || ce.Code != contract.CodeInvalidRequest {
		t.Fatalf("cancel of a malformed id: %v", ce)
	}
	n, err := f.a.CancelAllOrders(ctx, f.cred, m)
	if err != nil || n != 3 {
		t.Fatalf("cancel all: %d, %v; want 3 (stop, TP, SL)", n, err)
	}
	if o, _ := f.a.GetOrders(ctx, f.cred, nil); len(o.Orders) != 0 {
		t.Fatalf("orders left: %+v", o)
	}
	closed, err := f.a.CloseAllPositions(ctx, f.cred, m)
	if err != nil || !closed.ClosedSize.Equal(d("0.01")) || !closed.AvgClosePrice.IsPositive() {
		t.Fatalf("close all %+v, %v", closed, err)
	}
	if pos, _ := f.a.GetPositions(ctx, f.cred, &m); len(pos.Positions) != 0 {
		t.Fatalf("position left: %+v", pos)
	}
}

// TestAsyncRejection: Paradex answers 201 NEW and refuses later; the read
// back reports EXCHANGE_ERROR, never OPEN.
func TestAsyncRejection(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	m := f.market(t, "BTC-USD-PERP")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)

	_, err := f.a.PlaceLimitOrder(ctx, f.cred, limit(m, contract.Buy, "100", mark.MarkPrice.Mul(d("0.9")).Round(1).String(), "big-1"))
	ce := wantReason(t, err, contract.ReasonInsufficientMargin)
	if ce.ExchangeCode != "NOT_ENOUGH_MARGIN" {
		t.Errorf("exchange code %q", ce.ExchangeCode)
	}
	found, ok, err := f.a.FindOrder(ctx, f.cred, m, "big-1")
	if err != nil || !ok || found.Status != contract.StatusRejected {
		t.Fatalf("FindOrder(big-1) = %+v, %v, %v; want REJECTED", found, ok, err)
	}

	taker := limit(m, contract.Buy, "0.01", mark.MarkPrice.Mul(d("1.05")).Round(1).String(), "po-take")
	taker.PostOnly = true
	_, err = f.a.PlaceLimitOrder(ctx, f.cred, taker)
	wantReason(t, err, contract.ReasonPostOnlyRejected)

	_, err = f.a.PlaceMarketOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.MarketType, Side: contract.Buy, Size: d("100"), ClientOrderID: "big-mkt"})
	wantReason(t, err, contract.ReasonInsufficientMargin)

	// Risk checks slower than the reads: accepted, reported OPEN.
	f.sim.HoldIntake(len(readWaits) + 1)
	f.a.c.wait = func(context.Context, time.Duration) error { return nil }
	res, err := f.a.PlaceLimitOrder(ctx, f.cred, limit(m, contract.Buy, "0.01", mark.MarkPrice.Mul(d("0.9")).Round(1).String(), "slow-1"))
	if err != nil || res.Status != contract.StatusOpen || res.OrderID == "" {
		t.Fatalf("slow order: %+v, %v", res, err)
	}
}

// TestBatchOfTen: ten orders are one batch call; one refused in the
// middle is reported alone, in request order.
func TestBatchOfTen(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	m := f.market(t, "BTC-USD-PERP")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	var in []connector.OrderRequest
	for i := range 10 {
		in = append(in, limit(m, contract.Buy, "0.001", mark.MarkPrice.Mul(d("0.9")).Round(1).String(), "b-"+strconv.Itoa(i)))
	}
	in[4].Size = d("0.0000001") // below the size increment: refused at validation
	in[6].Size = d("100")       // beyond the margin: refused by the risk checks
	res, err := f.a.PlaceBatchOrder(ctx, f.cred, in)
	if err != nil || len(res) != 10 {
		t.Fatalf("batch: %+v, %v", res, err)
	}
	if got := f.sim.Hits(http.MethodPost, "/v1/orders/batch"); got != 1 {
		t.Fatalf("%d batch calls for 10 orders, want 1", got)
	}
	for i, r := range res {
		switch i {
		case 4:
			if r.Status != contract.StatusRejected || r.Error == nil || r.Error.Reason != contract.ReasonInvalidOrder {
				t.Errorf("order 4: %+v, want REJECTED INVALID_ORDER", r)
			}
		case 6:
			if r.Status != contract.StatusRejected || r.Error == nil || r.Error.Reason != contract.ReasonInsufficientMargin {
				t.Errorf("order 6: %+v, want REJECTED INSUFFICIENT_MARGIN", r)
			}
		default:
			if r.Status != contract.StatusOpen || len(r.OrderID) != 28 {
				t.Errorf("order %d: %+v", i, r)
			}
		}
	}
}

// TestJWTReusedAcrossRequests: 50 concurrent private calls share one
// /v1/auth call.
func TestJWTReusedAcrossRequests(t *testing.T) {
	f := newFixture(t, sim.Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.a.GetBalance(context.Background(), f.cred)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := f.sim.TokensIssued(); n != 1 {
		t.Fatalf("%d tokens issued for 50 requests, want 1", n)
	}
	if n := f.sim.Hits(http.MethodGet, "/v1/account"); n != 50 {
		t.Fatalf("%d balance reads, want 50", n)
	}
}

// TestJWTRefreshedBeforeExpiry: a token is used until a minute before its
// five minutes are up, then replaced before any request is refused.
func TestJWTRefreshedBeforeExpiry(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	for _, step := range []struct {
		advance time.Duration
		tokens  int
	}{{0, 1}, {2 * time.Minute, 1}, {time.Minute + 50*time.Second, 1}, {20 * time.Second, 2}, {3 * time.Minute, 2}, {70 * time.Second, 3}} {
		f.clock.advance(step.advance)
		if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
			t.Fatalf("after %v: %v", step.advance, err)
		}
		if n := f.sim.TokensIssued(); n != step.tokens {
			t.Fatalf("after %v: %d tokens, want %d", step.advance, n, step.tokens)
		}
	}
	if n := f.sim.Hits(http.MethodGet, "/v1/account"); n != 6 {
		t.Fatalf("%d balance reads, want 6 (none refused, none retried)", n)
	}
}

// TestJWT401RetriedOnce: a token Paradex refuses is replaced and the call
// made once more; a second 401 is AUTHENTICATION_FAILED.
func TestJWT401RetriedOnce(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
		t.Fatal(err)
	}
	f.sim.RevokeTokens()
	if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
		t.Fatalf("after revocation: %v", err)
	}
	if n, h := f.sim.TokensIssued(), f.sim.Hits(http.MethodGet, "/v1/account"); n != 2 || h != 3 {
		t.Fatalf("%d tokens and %d reads, want 2 and 3 (one retry)", n, h)
	}
	// Many callers refused at once replace the token once.
	f.sim.RevokeTokens()
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := f.sim.TokensIssued(); n != 3 {
		t.Fatalf("%d tokens after 20 concurrent refusals, want 3 (one more)", n)
	}
	before := f.sim.Hits(http.MethodGet, "/v1/account")
	f.sim.FailNext(http.MethodGet, "/v1/account", sim.Failure{Status: http.StatusUnauthorized, Code: "INVALID_TOKEN", Message: "expired"})
	f.sim.FailNext(http.MethodGet, "/v1/account", sim.Failure{Status: http.StatusUnauthorized, Code: "INVALID_TOKEN", Message: "expired"})
	_, err := f.a.GetBalance(ctx, f.cred)
	wantReason(t, err, contract.ReasonAuthenticationFailed)
	if h := f.sim.Hits(http.MethodGet, "/v1/account") - before; h != 2 {
		t.Fatalf("%d reads, want 2 (exactly one retry)", h)
	}
}

func TestCredentials(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	if ok, err := f.a.TestCredentials(ctx, f.cred); !ok || err != nil {
		t.Fatalf("good credential: %v, %v", ok, err)
	}
	for name, c := range map[string]connector.Credential{
		"wrong key":       credential("c2", testAddress, otherKey),
		"unknown account": credential("c3", "0x1234", testKey),
		"malformed key":   credential("c4", testAddress, "0xnothex"),
		"key too large":   credential("c5", testAddress, "0x0800000000000010ffffffffffffffffb781126dcae7b2321e66a241adc64d2f"),
		"no secret":       {CredentialInfo: contract.CredentialInfo{ID: "c6"}},
	} {
		if ok, err := f.a.TestCredentials(ctx, c); ok || !connector.IsRejected(err) {
			t.Errorf("%s: %v, %v; want valid:false", name, ok, err)
		}
	}
	// The main key posts to /v1/auth; a subkey of another account to
	// /v1/auth/{its public key}.
	if f.sim.Hits(http.MethodPost, "/v1/auth") == 0 {
		t.Error("the main key did not use POST /v1/auth")
	}
	sub, _ := stark.ParseKey(otherKey)
	if err := f.sim.AddAccount("0x5678", stark.HexFelt(sub.PublicKey())); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.a.TestCredentials(ctx, credential("c7", "0x5678", otherKey)); !ok || err != nil {
		t.Fatalf("subkey: %v, %v", ok, err)
	}
	if f.sim.Hits(http.MethodPost, "/v1/auth/{publicKey}") != 3 { // the wrong key and the unknown account above, then the subkey
		t.Errorf("subkeys used POST /v1/auth/{publicKey} %d times, want 3", f.sim.Hits(http.MethodPost, "/v1/auth/{publicKey}"))
	}
	if err := ValidateSecret(contract.Secret(`{"accountAddress":"0x1","starkPrivateKey":"0x0"}`)); err == nil {
		t.Error("a zero key validates")
	}
	if err := ValidateSecret(f.cred.Secret); err != nil {
		t.Errorf("the test credential does not validate: %v", err)
	}
}

func TestRateLimitedAnswer(t *testing.T) {
	f := newFixture(t, sim.Config{})
	f.sim.FailNext(http.MethodGet, "/v1/account", sim.Failure{Status: http.StatusTooManyRequests, Code: "RATE_LIMIT", Message: "slow down"})
	_, err := f.a.GetBalance(context.Background(), f.cred)
	if ce := wantReason(t, err, contract.ReasonUpstreamRateLimited); ce.RetryAfterSeconds < 1 {
		t.Fatalf("retry after %d", ce.RetryAfterSeconds)
	}
}

// TestProtectionLegRefused: a leg Paradex refuses fails the pair and
// leaves no leg behind. A take-profit closed after 201 (reduce-only with
// no short to reduce) is reported; a stop-loss refused after the
// take-profit stood takes the take-profit with it.
func TestProtectionLegRefused(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	m := f.market(t, "BTC-USD-PERP")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	if _, err := f.a.PlaceMarketOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.MarketType, Side: contract.Buy, Size: d("0.01"), ClientOrderID: "pl-1"}); err != nil {
		t.Fatal(err)
	}
	tp, sl := mark.MarkPrice.Mul(d("1.1")).Round(1), mark.MarkPrice.Mul(d("0.9")).Round(1)
	_, err := f.a.PlaceProtectionOrders(ctx, f.cred, connector.ProtectionRequest{Market: m, PositionSide: contract.Short, Size: d("0.01"),
		TakeProfit: &sl, StopLoss: &tp, ClientOrderID: "pl-short"})
	if ce := wantReason(t, err, contract.ReasonInvalidOrder); ce.ExchangeCode != "REDUCE_ONLY_WOULD_INCREASE" {
		t.Fatalf("protection of a short that does not exist: %v", ce)
	}
	offTick := sl.Add(d("0.05"))
	_, err = f.a.PlaceProtectionOrders(ctx, f.cred, connector.ProtectionRequest{Market: m, PositionSide: contract.Long, Size: d("0.01"),
		TakeProfit: &tp, StopLoss: &offTick, ClientOrderID: "pl-long"})
	wantReason(t, err, contract.ReasonInvalidOrder)
	if f.sim.Hits(http.MethodDelete, "/v1/orders/{id}") != 1 {
		t.Fatal("the take-profit was not cancelled")
	}
	if o, _ := f.a.GetOrders(ctx, f.cred, &m); len(o.Orders) != 0 {
		t.Fatalf("orphan legs: %+v", o.Orders)
	}
}
