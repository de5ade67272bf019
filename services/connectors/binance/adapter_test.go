package binance

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	"github.com/shopspring/decimal"
)

const (
	testKey    = "test-api-key"
	testSecret = "test-api-secret"
)

// fixture is an adapter wired to a simulator over HTTP.
type fixture struct {
	sim   *sim.Server
	url   string
	a     *Adapter
	cred  connector.Credential
	waits []time.Duration
}

func newFixture(t *testing.T, simCfg sim.Config, now func() time.Time) *fixture {
	t.Helper()
	simCfg.Keys = map[string]string{testKey: testSecret}
	s := sim.New(simCfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.MainnetURL, cfg.TestnetURL, cfg.Now = srv.URL, srv.URL, now
	f := &fixture{sim: s, url: srv.URL, a: NewAdapter(cfg, srv.Client())}
	f.cred = credential(contract.Mainnet, testKey, testSecret)
	return f
}

func credential(env contract.Environment, key, secret string) connector.Credential {
	raw, _ := json.Marshal(map[string]string{"apiKey": key, "apiSecret": secret})
	return connector.Credential{CredentialInfo: contract.CredentialInfo{ID: "c1", Exchange: contract.Binance, Environment: env}, Secret: raw}
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

func TestMarketsFromExchangeInfo(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	list, err := f.a.Markets(context.Background(), f.cred)
	if err != nil {
		t.Fatal(err)
	}
	d := decimal.RequireFromString
	want := map[string]connector.Market{
		"BTCUSDT":      {Canonical: "BTC-USDT-PERP", Native: "BTCUSDT", Base: "BTC", Quote: "USDT", Multiplier: 1, TickSize: d("0.1"), LotSize: d("0.001"), MinSize: d("0.001"), MinNotional: d("100")},
		"ETHUSDT":      {Canonical: "ETH-USDT-PERP", Native: "ETHUSDT", Base: "ETH", Quote: "USDT", Multiplier: 1, TickSize: d("0.01"), LotSize: d("0.001"), MinSize: d("0.001"), MinNotional: d("20")},
		"1000PEPEUSDT": {Canonical: "1000PEPE-USDT-PERP", Native: "1000PEPEUSDT", Base: "PEPE", Quote: "USDT", Multiplier: 1000, TickSize: d("0.0000001"), LotSize: d("1"), MinSize: d("1"), MinNotional: d("5")},
	}
	if len(list) != len(want) {
		t.Fatalf("want %d markets (no delivery contract), got %v", len(want), list)
	}
	for _, m := range list {
		w := want[m.Native]
		if m.Canonical != w.Canonical || m.Base != w.Base || m.Multiplier != w.Multiplier || !m.TickSize.Equal(w.TickSize) ||
			!m.LotSize.Equal(w.LotSize) || !m.MinSize.Equal(w.MinSize) || !m.MinNotional.Equal(w.MinNotional) ||
			!m.ReduceOnlyBelowMinNotional {
			t.Errorf("%s: got %+v, want %+v", m.Native, m, w)
		}
	}
}

func TestTestCredentials(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	tests := []struct {
		name string
		cred connector.Credential
		want bool
	}{
		{"right secret", f.cred, true},
		{"wrong secret", credential(contract.Mainnet, testKey, "not-the-secret"), false},
		{"unknown key", credential(contract.Mainnet, "nobody", testSecret), false},
		{"testnet host", credential(contract.Testnet, testKey, testSecret), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.a.TestCredentials(context.Background(), tt.cred)
			if got != tt.want || (tt.want && err != nil) || (!tt.want && !connector.IsRejected(err)) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	_, err := f.a.GetBalance(context.Background(), credential(contract.Mainnet, testKey, "not-the-secret"))
	if ce := testenv.WantUpstream(t, err, contract.ReasonAuthenticationFailed); ce.ExchangeCode != "-1022" {
		t.Errorf("wrong secret: exchange code %s, want -1022", ce.ExchangeCode)
	}
}

// TestClockSkew: Binance's clock runs 45 s ahead of ours, far outside
// recvWindow; the offset is measured first, and measured again when
// Binance answers -1021 after its clock jumped.
func TestClockSkew(t *testing.T) {
	var mu sync.Mutex
	skew := 45 * time.Second
	simNow := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(skew) }
	f := newFixture(t, sim.Config{Now: simNow}, nil)
	ctx := context.Background()
	if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
		t.Fatalf("balance with Binance 45 s ahead: %v", err)
	}
	if n := f.sim.Hits("GET", "/fapi/v1/time"); n != 1 {
		t.Errorf("server time asked %d times, want 1", n)
	}
	mu.Lock()
	skew = -30 * time.Second
	mu.Unlock()
	if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
		t.Fatalf("balance after Binance's clock jumped back: %v", err)
	}
	if n := f.sim.Hits("GET", "/fapi/v1/time"); n != 2 {
		t.Errorf("server time asked %d times, want 2 (resync after -1021)", n)
	}
	if n := f.sim.Hits("GET", "/fapi/v3/account"); n != 3 {
		t.Errorf("account asked %d times, want 3 (one retried)", n)
	}
}

// TestWeightSlowdown: with a 20-weight budget the connector waits for the
// next minute before Binance would answer 429, and never gets a 429.
func TestWeightSlowdown(t *testing.T) {
	clk := testenv.NewClock(time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC))
	f := newFixture(t, sim.Config{Now: clk.Now, WeightLimit: 20}, clk.Now)
	f.a.c.Wait = func(_ context.Context, d time.Duration) error {
		f.waits = append(f.waits, d)
		clk.Advance(d)
		return nil
	}
	m := f.market(t, "BTCUSDT")
	for i := range 40 {
		if _, err := f.a.GetMarkPrice(context.Background(), f.cred, m); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if len(f.waits) < 2 {
		t.Fatalf("want waits for the next minute, got %v", f.waits)
	}
	if f.waits[0] != 55*time.Second {
		t.Errorf("first wait %s, want 55s (to the minute boundary)", f.waits[0])
	}
}

// TestWeightSharedByReplicas: two connector replicas behind one IP share
// Binance's weight budget. The second learns from X-MBX-USED-WEIGHT-1M what
// the first used and waits for the next minute before Binance would answer
// 429; counting only its own requests it would run into the limit.
func TestWeightSharedByReplicas(t *testing.T) {
	clk := testenv.NewClock(time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC))
	f := newFixture(t, sim.Config{Now: clk.Now, WeightLimit: 20}, clk.Now)
	m := f.market(t, "BTCUSDT") // 1
	for range 14 {              // 15 of the IP's 20
		if _, err := f.a.GetMarkPrice(context.Background(), f.cred, m); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultConfig()
	cfg.MainnetURL, cfg.TestnetURL, cfg.Now = f.url, f.url, clk.Now
	other := NewAdapter(cfg, nil)
	var waits []time.Duration
	other.c.Wait = func(_ context.Context, d time.Duration) error { waits = append(waits, d); clk.Advance(d); return nil }
	if _, err := other.Markets(context.Background(), f.cred); err != nil { // as the runtime does first: learns the limit
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := other.GetMarkPrice(context.Background(), f.cred, m); err != nil {
			t.Fatalf("second replica, call %d: %v", i, err)
		}
	}
	if len(waits) != 1 || waits[0] != 55*time.Second {
		t.Errorf("second replica waited %v, want once 55s (to the next minute)", waits)
	}
}

// TestUpstreamRateLimited: 429 and 418 become UPSTREAM_RATE_LIMITED with
// retryAfter, and nothing is sent to Binance until that time has passed.
func TestUpstreamRateLimited(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	tests := []struct {
		name  string
		fail  sim.Failure
		retry int
	}{
		{"429 with Retry-After", sim.Failure{Status: 429, Code: -1003, Msg: "Too many requests", RetryAfter: 7}, 7},
		{"429 without Retry-After", sim.Failure{Status: 429, Code: -1003, Msg: "Too many requests"}, 50},
		{"418 banned until", sim.Failure{Status: 418, Code: -1003, Msg: "Way too many requests; IP(1.2.3.4) banned until " +
			itoa(start.Add(90*time.Second).UnixMilli()) + ". Please use the websocket"}, 90},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testenv.NewClock(start)
			f := newFixture(t, sim.Config{Now: clk.Now}, clk.Now)
			m := f.market(t, "BTCUSDT")
			f.sim.FailNext("GET", "/fapi/v1/premiumIndex", tt.fail)
			_, err := f.a.GetMarkPrice(context.Background(), f.cred, m)
			ce := testenv.WantUpstream(t, err, contract.ReasonUpstreamRateLimited)
			if ce.RetryAfterSeconds != tt.retry || ce.ExchangeCode != "-1003" {
				t.Errorf("retryAfter %d code %s, want %d -1003", ce.RetryAfterSeconds, ce.ExchangeCode, tt.retry)
			}
			before := f.sim.TotalHits()
			_, err = f.a.GetMarkPrice(context.Background(), f.cred, m)
			testenv.WantUpstream(t, err, contract.ReasonUpstreamRateLimited)
			if f.sim.TotalHits() != before {
				t.Errorf("a request was sent during the ban")
			}
			clk.Advance(time.Duration(tt.retry+1) * time.Second)
			if _, err := f.a.GetMarkPrice(context.Background(), f.cred, m); err != nil {
				t.Errorf("after the ban: %v", err)
			}
		})
	}
}

func itoa(n int64) string { return decimal.NewFromInt(n).String() }

// TestErrorReasonsFromSimulator drives real Binance answers through the
// adapter: each becomes its reason.
func TestErrorReasonsFromSimulator(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	limit := func(side contract.Side, size, price string, postOnly bool) error {
		_, err := f.a.PlaceLimitOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: side,
			Size: decimal.RequireFromString(size), Price: decimal.RequireFromString(price), PostOnly: postOnly, ClientOrderID: "x" + size})
		return err
	}
	tests := []struct {
		name   string
		run    func() error
		reason contract.Reason
		code   string
	}{
		{"insufficient margin", func() error {
			return limit(contract.Buy, "50", mark.MarkPrice.Mul(decimal.RequireFromString("0.9")).Round(0).String(), false)
		}, contract.ReasonInsufficientMargin, "-2019"},
		{"post-only would cross", func() error {
			return limit(contract.Buy, "0.01", mark.MarkPrice.Mul(decimal.RequireFromString("1.1")).Round(0).String(), true)
		}, contract.ReasonPostOnlyRejected, "-5022"},
		{"unknown order", func() error { return f.a.CancelOrder(ctx, f.cred, "4061349999", &m) }, contract.ReasonOrderNotFound, "-2011"},
		{"unknown algo order", func() error { return f.a.CancelOrder(ctx, f.cred, "algo-12", nil) }, contract.ReasonOrderNotFound, "-2011"},
		{"stop would trigger", func() error {
			// The mark the runtime judged by (below the trigger) is gone by
			// the time Binance sees the order.
			_, err := f.a.PlaceStopOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Stop, Side: contract.Buy,
				Size: decimal.RequireFromString("0.01"), TriggerPrice: mark.MarkPrice.Mul(decimal.RequireFromString("0.5")).Round(0),
				Mark: mark.MarkPrice.Mul(decimal.RequireFromString("0.4")), ClientOrderID: "stop1"})
			return err
		}, contract.ReasonInvalidOrder, "-2021"},
		{"reduce-only without position", func() error {
			_, err := f.a.PlaceMarketOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.MarketType, Side: contract.Sell,
				Size: decimal.RequireFromString("0.01"), ReduceOnly: true, ClientOrderID: "ro1"})
			return err
		}, contract.ReasonInvalidOrder, "-2022"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ce := testenv.WantUpstream(t, tt.run(), tt.reason); ce.ExchangeCode != tt.code {
				t.Errorf("exchange code %s, want %s", ce.ExchangeCode, tt.code)
			}
		})
	}
}

// TestPostOnlyExpired: Binance's New Order doc says a LIMIT order with a
// special timeInForce answers RESULT with its final status, FILLED or
// EXPIRED; a post-only (GTX) order that would have taken liquidity can so
// come back EXPIRED with nothing filled instead of -5022. Both are
// POST_ONLY_REJECTED, alone and in a batch.
func TestPostOnlyExpired(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	expire := func(body []byte) []byte {
		var o map[string]any
		_ = json.Unmarshal(body, &o)
		o["status"], o["executedQty"] = "EXPIRED", "0"
		out, _ := json.Marshal(o)
		return out
	}
	gtx := func(id string) connector.OrderRequest {
		return connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy, Size: decimal.RequireFromString("0.01"),
			Price: decimal.RequireFromString("50000"), PostOnly: true, ClientOrderID: id}
	}
	f.sim.RewriteNext(http.MethodPost, "/fapi/v1/order", expire)
	_, err := f.a.PlaceLimitOrder(ctx, f.cred, gtx("gtx-1"))
	if ce := testenv.WantUpstream(t, err, contract.ReasonPostOnlyRejected); ce.ExchangeMessage != "EXPIRED" {
		t.Errorf("exchange message %q", ce.ExchangeMessage)
	}
	f.sim.RewriteNext(http.MethodPost, "/fapi/v1/batchOrders", func(body []byte) []byte {
		var slots []json.RawMessage
		_ = json.Unmarshal(body, &slots)
		slots[1] = expire(slots[1])
		out, _ := json.Marshal(slots)
		return out
	})
	res, err := f.a.PlaceBatchOrder(ctx, f.cred, []connector.OrderRequest{gtx("gtx-2"), gtx("gtx-3")})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != contract.StatusOpen || res[1].Status != contract.StatusRejected || res[1].Error == nil ||
		res[1].Error.Reason != contract.ReasonPostOnlyRejected {
		t.Errorf("batch: %+v", res)
	}
	// A GTX order Binance kept resting is simply OPEN.
	if r, err := f.a.PlaceLimitOrder(ctx, f.cred, gtx("gtx-4")); err != nil || r.Status != contract.StatusOpen {
		t.Errorf("resting post-only: %+v %v", r, err)
	}
}

func TestHedgeModeRefused(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	f.sim.SetHedgeMode(testKey, true)
	m := f.market(t, "BTCUSDT")
	_, err := f.a.PlaceLimitOrder(context.Background(), f.cred, connector.OrderRequest{Market: m, Type: connector.Limit,
		Side: contract.Buy, Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000"), ClientOrderID: "h1"})
	ce, _ := contract.AsError(err)
	if err == nil || ce.Code != contract.CodeInvalidRequest || !strings.Contains(ce.Message, "hedge position mode") {
		t.Fatalf("want INVALID_REQUEST naming hedge mode, got %v", err)
	}
	if n := f.sim.Hits(http.MethodPost, "/fapi/v1/order"); n != 0 {
		t.Errorf("%d orders sent in hedge mode", n)
	}
}

// TestHedgeModeChangedUnderUs: the account switches to hedge mode after the
// connector cached one-way. Binance refuses the next order with -4061; the
// error says what happened and the cached mode is dropped, so the order
// after that is refused before anything is sent.
func TestHedgeModeChangedUnderUs(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	limit := func(id string) error {
		_, err := f.a.PlaceLimitOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
			Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000"), ClientOrderID: id})
		return err
	}
	if err := limit("one-way"); err != nil {
		t.Fatal(err)
	}
	f.sim.SetHedgeMode(testKey, true)
	ce := testenv.WantUpstream(t, limit("switched"), contract.ReasonInvalidOrder)
	if ce.ExchangeCode != "-4061" || !strings.Contains(ce.Message, "hedge") {
		t.Errorf("-4061 answer: %+v", ce)
	}
	sent := f.sim.Hits(http.MethodPost, "/fapi/v1/order")
	err := limit("again")
	if ce, _ := contract.AsError(err); err == nil || ce.Code != contract.CodeInvalidRequest || !strings.Contains(ce.Message, "hedge position mode") {
		t.Fatalf("want INVALID_REQUEST naming hedge mode, got %v", err)
	}
	if f.sim.Hits(http.MethodPost, "/fapi/v1/order") != sent {
		t.Error("an order was sent after Binance reported hedge mode")
	}
}

// TestMarketsRefresh: each Markets call reads exchangeInfo again, so when
// the runtime refreshes its cache a contract that stops trading drops out,
// a new one appears, and the IP weight limit follows exchangeInfo.
func TestMarketsRefresh(t *testing.T) {
	f := newFixture(t, sim.Config{WeightLimit: 1200}, nil)
	ctx := context.Background()
	natives := func() []string {
		list, err := f.a.Markets(ctx, f.cred)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range list {
			out = append(out, m.Native)
		}
		return out
	}
	if got := natives(); len(got) != 3 {
		t.Fatalf("markets %v", got)
	}
	if n := f.a.c.Host(f.url).Gate.Limit(); n != 1200 {
		t.Errorf("weight limit %d, want exchangeInfo's 1200", n)
	}
	f.sim.SetStatus("ETHUSDT", "SETTLING")
	if got := natives(); len(got) != 2 || slices.Contains(got, "ETHUSDT") {
		t.Errorf("after ETHUSDT stopped trading: %v", got)
	}
	f.sim.SetStatus("ETHUSDT", "TRADING")
	if got := natives(); !slices.Contains(got, "ETHUSDT") {
		t.Errorf("after ETHUSDT trades again: %v", got)
	}
}

// TestBatchSplit: 7 orders are two calls (5 + 2), results in request
// order, a rejected order in its own slot.
func TestBatchSplit(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	m := f.market(t, "BTCUSDT")
	var orders []connector.OrderRequest
	for i := range 7 {
		price := decimal.NewFromInt(int64(50000 + i))
		if i == 5 {
			price = decimal.RequireFromString("200000") // post-only above the market: rejected
		}
		orders = append(orders, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
			Size: decimal.RequireFromString("0.01"), Price: price, PostOnly: true, ClientOrderID: "b" + itoa(int64(i))})
	}
	res, err := f.a.PlaceBatchOrder(context.Background(), f.cred, orders)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.sim.Hits(http.MethodPost, "/fapi/v1/batchOrders"); n != 2 {
		t.Errorf("want 2 batch calls, got %d", n)
	}
	open, _ := f.a.GetOrders(context.Background(), f.cred, &m)
	priceOf := map[string]string{}
	for _, o := range open.Orders {
		priceOf[o.ID] = o.Price.String()
	}
	for i, r := range res {
		if i == 5 {
			if r.Status != contract.StatusRejected || r.Error == nil || r.Error.Reason != contract.ReasonPostOnlyRejected {
				t.Errorf("slot 5: %+v", r)
			}
			continue
		}
		if r.Status != contract.StatusOpen || priceOf[r.OrderID] != itoa(int64(50000+i)) {
			t.Errorf("slot %d: %+v (price %s)", i, r, priceOf[r.OrderID])
		}
	}
}

func TestClientOrderIDRule(t *testing.T) {
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{"uuid", "0b6b2c3e-8a0f-4c8e-9d51-1f4a8f0b2c7d", true},
		{"all allowed characters", "Az09.:/_-", true},
		{"36 characters", strings.Repeat("a", 36), true},
		{"37 characters", strings.Repeat("a", 37), false},
		{"empty", "", false},
		{"space", "a b", false},
		{"plus", "a+b", false},
		{"non-ascii", "ordré", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := clientIDRule.Check(tt.id)
			if (err == nil) != tt.ok {
				t.Fatalf("checkClientID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
			}
			if err != nil {
				ce, _ := contract.AsError(err)
				if ce.Code != contract.CodeInvalidRequest || !strings.Contains(ce.Message, "1 to 36 characters") {
					t.Errorf("message %q", ce.Message)
				}
			}
		})
	}
}
