package okx

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/okx/sim"
	"github.com/shopspring/decimal"
)

const (
	testKey        = "test-api-key"
	testSecret     = "test-api-secret"
	testPassphrase = "test-passphrase"
	demoKey        = "demo-api-key"
)

var d = decimal.RequireFromString

// fixture is an adapter wired to a simulator over HTTP.
type fixture struct {
	sim  *sim.Server
	url  string
	a    *Adapter
	cred connector.Credential
}

func newFixture(t *testing.T, simCfg sim.Config, now func() time.Time) *fixture {
	t.Helper()
	return newFixtureWrapped(t, simCfg, now, nil)
}

// newFixtureWrapped puts wrap (when not nil) between the adapter and the
// simulator, to lose or delay answers.
func newFixtureWrapped(t *testing.T, simCfg sim.Config, now func() time.Time, wrap func(http.Handler) http.Handler) *fixture {
	t.Helper()
	simCfg.Keys = map[string]sim.Key{
		testKey: {Secret: testSecret, Passphrase: testPassphrase},
		demoKey: {Secret: testSecret, Passphrase: testPassphrase, Demo: true},
	}
	s := sim.New(simCfg)
	var h http.Handler = s
	if wrap != nil {
		h = wrap(s)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.MainnetURL, cfg.TestnetURL, cfg.Now = srv.URL, srv.URL, now
	f := &fixture{sim: s, url: srv.URL, a: NewAdapter(cfg, srv.Client())}
	f.a.c.Wait = func(ctx context.Context, d time.Duration) error { return nil } // read-backs without real pauses
	f.cred = credential(contract.Mainnet, testKey, testSecret, testPassphrase)
	return f
}

func credential(env contract.Environment, key, secret, passphrase string) connector.Credential {
	raw, _ := json.Marshal(map[string]string{"apiKey": key, "apiSecret": secret, "passphrase": passphrase})
	return connector.Credential{CredentialInfo: contract.CredentialInfo{ID: "c1", Exchange: contract.OKX, Environment: env}, Secret: raw}
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

func limitOrder(m connector.Market, side contract.Side, size, price string, postOnly bool, id string) connector.OrderRequest {
	return connector.OrderRequest{Market: m, Type: connector.Limit, Side: side, Size: d(size), Price: d(price), PostOnly: postOnly, ClientOrderID: id}
}

func marketOrder(m connector.Market, side contract.Side, size string, reduceOnly bool, id string) connector.OrderRequest {
	return connector.OrderRequest{Market: m, Type: connector.MarketType, Side: side, Size: d(size), ReduceOnly: reduceOnly, ClientOrderID: id}
}

// TestMarketsFromInstruments: linear USDT swaps only, lot and minimum in
// base units (contracts × ctVal).
func TestMarketsFromInstruments(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	list, err := f.a.Markets(context.Background(), f.cred)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]connector.Market{
		"BTC-USDT-SWAP":  {Canonical: "BTC-USDT-PERP", Base: "BTC", TickSize: d("0.1"), LotSize: d("0.0001"), MinSize: d("0.0001"), MaxLeverage: 100},
		"ETH-USDT-SWAP":  {Canonical: "ETH-USDT-PERP", Base: "ETH", TickSize: d("0.01"), LotSize: d("0.001"), MinSize: d("0.001"), MaxLeverage: 100},
		"DOGE-USDT-SWAP": {Canonical: "DOGE-USDT-PERP", Base: "DOGE", TickSize: d("0.00001"), LotSize: d("10"), MinSize: d("10"), MaxLeverage: 75},
	}
	if len(list) != len(want) {
		t.Fatalf("want %d markets (no inverse swap), got %v", len(want), list)
	}
	for _, m := range list {
		w, ok := want[m.Native]
		if !ok || m.Canonical != w.Canonical || m.Base != w.Base || m.Quote != "USDT" || !m.TickSize.Equal(w.TickSize) ||
			!m.LotSize.Equal(w.LotSize) || !m.MinSize.Equal(w.MinSize) || m.MaxLeverage != w.MaxLeverage {
			t.Errorf("%s: got %+v, want %+v", m.Native, m, w)
		}
	}
}

// TestAllOperations runs the 20 operations against the simulator over
// HTTP on BTC (ctVal 0.01) and DOGE (ctVal 10): every size the adapter
// takes or returns is in base units.
func TestAllOperations(t *testing.T) {
	for _, tc := range []struct {
		native, size, small string
	}{
		{"BTC-USDT-SWAP", "0.05", "0.001"},
		{"DOGE-USDT-SWAP", "5000", "100"},
	} {
		t.Run(tc.native, func(t *testing.T) {
			f := newFixture(t, sim.Config{}, nil)
			ctx := context.Background()
			m := f.market(t, tc.native)
			book, err := f.a.GetOrderbook(ctx, f.cred, m, 5)
			if err != nil || len(book.Bids) != 5 || len(book.Asks) != 5 || !book.Bids[0][0].LessThan(book.Asks[0][0]) {
				t.Fatalf("orderbook: %+v %v", book, err)
			}
			simBook, _ := f.sim.Engine().Orderbook(tc.native, 1)
			if !book.Asks[0][1].Equal(simBook.Asks[0].Size) {
				t.Errorf("book size %s, want base units %s", book.Asks[0][1], simBook.Asks[0].Size)
			}
			mark, err := f.a.GetMarkPrice(ctx, f.cred, m)
			if err != nil || !mark.MarkPrice.IsPositive() || !mark.IndexPrice.IsPositive() {
				t.Fatalf("mark: %+v %v", mark, err)
			}
			candles, err := f.a.GetCandles(ctx, f.cred, m, 60, 10)
			if err != nil || len(candles.Candles) != 10 || candles.Candles[0].Time >= candles.Candles[9].Time {
				t.Fatalf("candles: %d %v", len(candles.Candles), err)
			}
			fr, err := f.a.GetFundingRate(ctx, f.cred, m)
			if err != nil || fr.NextFundingTime <= time.Now().Unix() {
				t.Fatalf("funding: %+v %v", fr, err)
			}
			mk, err := f.a.GetMarketsWithFunding(ctx, f.cred)
			if err != nil || len(mk.Markets) != 3 || !mk.Markets[0].OpenInterest.IsPositive() {
				t.Fatalf("markets: %+v %v", mk, err)
			}
			fee, err := f.a.GetFeeInfo(ctx, f.cred, m)
			fees := f.sim.Engine().Fees()
			if err != nil || !fee.MakerFee.Equal(fees.MakerBps) || !fee.TakerFee.Equal(fees.TakerBps) {
				t.Fatalf("fees: %+v %v, want %+v", fee, err, fees)
			}
			if ok, err := f.a.TestCredentials(ctx, f.cred); !ok || err != nil {
				t.Fatalf("credentials: %v %v", ok, err)
			}
			if lev, err := f.a.SetLeverage(ctx, f.cred, m, 10); err != nil || lev != 10 {
				t.Fatalf("leverage: %d %v", lev, err)
			}
			bal, err := f.a.GetBalance(ctx, f.cred)
			if err != nil || !bal.Equity.IsPositive() || !bal.FreeCollateral.IsPositive() {
				t.Fatalf("balance: %+v %v", bal, err)
			}

			mo, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Buy, tc.size, false, "mkt-1"))
			if err != nil || !mo.FilledSize.Equal(d(tc.size)) || !mo.FilledPrice.IsPositive() || !mo.Fee.IsPositive() {
				t.Fatalf("market order: %+v %v (want size %s and a positive fee)", mo, err, tc.size)
			}
			pos, err := f.a.GetPositions(ctx, f.cred, &m)
			if err != nil || len(pos.Positions) != 1 || !pos.Positions[0].Size.Equal(d(tc.size)) || pos.Positions[0].Side != contract.Long ||
				!pos.Positions[0].Leverage.Equal(d("10")) {
				t.Fatalf("positions: %+v %v", pos, err)
			}
			fills, err := f.a.GetFills(ctx, f.cred, m, 10)
			if err != nil || len(fills.Fills) == 0 || fills.Fills[0].OrderID != mo.OrderID || !fills.Fills[0].Fee.IsPositive() {
				t.Fatalf("fills: %+v %v", fills, err)
			}
			sum := decimal.Zero
			for _, fl := range fills.Fills {
				sum = sum.Add(fl.Size)
			}
			if !sum.Equal(d(tc.size)) {
				t.Errorf("fills sum to %s, want %s", sum, tc.size)
			}

			low := mark.MarkPrice.Mul(d("0.8")).Truncate(2)
			low = low.Sub(low.Mod(m.TickSize))
			lo, err := f.a.PlaceLimitOrder(ctx, f.cred, limitOrder(m, contract.Buy, tc.small, low.String(), true, "lim-1"))
			if err != nil || lo.Status != contract.StatusOpen || !lo.Size.Equal(d(tc.small)) {
				t.Fatalf("limit: %+v %v", lo, err)
			}
			trigger := mark.MarkPrice.Mul(d("0.7")).Truncate(2)
			trigger = trigger.Sub(trigger.Mod(m.TickSize))
			st, err := f.a.PlaceStopOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Stop, Side: contract.Sell,
				Size: d(tc.small), TriggerPrice: trigger, ReduceOnly: true, ClientOrderID: "stop-1"})
			if err != nil || st.Status != contract.StatusPending || !strings.HasPrefix(st.OrderID, "algo-") {
				t.Fatalf("stop: %+v %v", st, err)
			}
			tp, sl := mark.MarkPrice.Mul(d("1.5")), trigger
			tp = tp.Sub(tp.Mod(m.TickSize))
			pr, err := f.a.PlaceProtectionOrders(ctx, f.cred, connector.ProtectionRequest{Market: m, PositionSide: contract.Long,
				Size: d(tc.size), TakeProfit: &tp, StopLoss: &sl, ClientOrderID: "prot-1"})
			if err != nil || pr.TPOrderID == "" || pr.TPOrderID != pr.SLOrderID {
				t.Fatalf("protection: %+v %v (want one oco id for both legs)", pr, err)
			}
			batch, err := f.a.PlaceBatchOrder(ctx, f.cred, []connector.OrderRequest{
				limitOrder(m, contract.Buy, tc.small, low.String(), false, "b-1"),
				limitOrder(m, contract.Buy, tc.small, low.String(), false, "b-2"),
			})
			if err != nil || len(batch) != 2 || batch[0].Status != contract.StatusOpen || batch[1].Status != contract.StatusOpen {
				t.Fatalf("batch: %+v %v", batch, err)
			}
			orders, err := f.a.GetOrders(ctx, f.cred, &m)
			if err != nil || len(orders.Orders) != 5 {
				t.Fatalf("orders: %d %+v %v (want 3 limit, 1 stop, 1 oco)", len(orders.Orders), orders, err)
			}
			for _, o := range orders.Orders {
				if o.ID == lo.OrderID && (!o.Size.Equal(d(tc.small)) || o.ClientOrderID != clOrdID("lim-1")) {
					t.Errorf("limit order listed as %+v", o)
				}
			}
			for _, id := range []string{"lim-1", "stop-1", "prot-1-tp", "prot-1-sl"} {
				fo, found, err := f.a.FindOrder(ctx, f.cred, m, id)
				if err != nil || !found || fo.Status == contract.StatusRejected {
					t.Errorf("find %s: %+v %v %v", id, fo, found, err)
				}
			}
			if err := f.a.CancelOrder(ctx, f.cred, lo.OrderID, &m); err != nil {
				t.Fatalf("cancel: %v", err)
			}
			if err := f.a.CancelOrder(ctx, f.cred, st.OrderID, nil); err != nil {
				t.Fatalf("cancel stop without market: %v", err)
			}
			n, err := f.a.CancelAllOrders(ctx, f.cred, m)
			if err != nil || n != 3 {
				t.Fatalf("cancel all: %d %v, want 3 (2 limit + 1 oco)", n, err)
			}
			closed, err := f.a.CloseAllPositions(ctx, f.cred, m)
			if err != nil || !closed.ClosedSize.Equal(d(tc.size)) || !closed.AvgClosePrice.IsPositive() {
				t.Fatalf("close all: %+v %v", closed, err)
			}
			pos, _ = f.a.GetPositions(ctx, f.cred, &m)
			if len(pos.Positions) != 0 {
				t.Errorf("positions after close: %+v", pos)
			}
		})
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
		{"wrong secret", credential(contract.Mainnet, testKey, "not-the-secret", testPassphrase), false},
		{"wrong passphrase", credential(contract.Mainnet, testKey, testSecret, "not-the-passphrase"), false},
		{"unknown key", credential(contract.Mainnet, "nobody", testSecret, testPassphrase), false},
		{"no passphrase", credential(contract.Mainnet, testKey, testSecret, ""), false},
		{"demo key as demo", credential(contract.Testnet, demoKey, testSecret, testPassphrase), true},
		{"demo key as live", credential(contract.Mainnet, demoKey, testSecret, testPassphrase), false},
		{"live key as demo", credential(contract.Testnet, testKey, testSecret, testPassphrase), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.a.TestCredentials(context.Background(), tt.cred)
			if got != tt.want || (tt.want && err != nil) || (!tt.want && !connector.IsRejected(err)) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	_, err := f.a.GetBalance(context.Background(), credential(contract.Mainnet, testKey, "not-the-secret", testPassphrase))
	if ce := testenv.WantUpstream(t, err, contract.ReasonAuthenticationFailed); ce.ExchangeCode != "50113" {
		t.Errorf("wrong secret: exchange code %s, want 50113", ce.ExchangeCode)
	}
	_, err = f.a.GetBalance(context.Background(), credential(contract.Mainnet, demoKey, testSecret, testPassphrase))
	if ce := testenv.WantUpstream(t, err, contract.ReasonAuthenticationFailed); ce.ExchangeCode != "50101" || !strings.Contains(ce.Message, "other OKX environment") {
		t.Errorf("demo key on live: %+v", ce)
	}
}

// TestDemoHeader: x-simulated-trading: 1 on every request of a testnet
// credential, never on a mainnet one.
func TestDemoHeader(t *testing.T) {
	for _, tc := range []struct {
		env  contract.Environment
		want string
	}{{contract.Mainnet, ""}, {contract.Testnet, "1"}} {
		t.Run(string(tc.env), func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			s := sim.New(sim.Config{Keys: map[string]sim.Key{testKey: {Secret: testSecret, Passphrase: testPassphrase, Demo: tc.env == contract.Testnet}}})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen[r.Header.Get("x-simulated-trading")]++
				mu.Unlock()
				s.ServeHTTP(w, r)
			}))
			defer srv.Close()
			cfg := DefaultConfig()
			cfg.MainnetURL, cfg.TestnetURL = srv.URL, srv.URL
			a := NewAdapter(cfg, srv.Client())
			c := credential(tc.env, testKey, testSecret, testPassphrase)
			m := connector.Market{Native: "BTC-USDT-SWAP"}
			if _, err := a.GetMarkPrice(context.Background(), c, m); err != nil {
				t.Fatal(err)
			}
			if _, err := a.GetBalance(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 1 || seen[tc.want] == 0 {
				t.Errorf("x-simulated-trading values seen: %v, want only %q", seen, tc.want)
			}
		})
	}
}

// TestClockSkew: OKX's clock runs 45 s ahead of ours, outside its
// timestamp window; the offset is measured first, and measured again when
// OKX answers 50102 after its clock jumped.
func TestClockSkew(t *testing.T) {
	var mu sync.Mutex
	skew := 45 * time.Second
	simNow := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(skew) }
	f := newFixture(t, sim.Config{Now: simNow}, nil)
	ctx := context.Background()
	if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
		t.Fatalf("balance with OKX 45 s ahead: %v", err)
	}
	if n := f.sim.Hits("GET", "/api/v5/public/time"); n != 1 {
		t.Errorf("server time asked %d times, want 1", n)
	}
	mu.Lock()
	skew = -40 * time.Second
	mu.Unlock()
	if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
		t.Fatalf("balance after OKX's clock jumped back: %v", err)
	}
	if n := f.sim.Hits("GET", "/api/v5/public/time"); n != 2 {
		t.Errorf("server time asked %d times, want 2 (resync after 50102)", n)
	}
	if n := f.sim.Hits("GET", "/api/v5/account/balance"); n != 3 {
		t.Errorf("balance asked %d times, want 3 (one retried)", n)
	}
}
