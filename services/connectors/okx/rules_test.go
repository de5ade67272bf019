package okx

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/okx/sim"
	"github.com/shopspring/decimal"
)

// TestStopDirection runs DESIGN §13's stop table against the simulator.
// An OKX trigger algo order has no direction of its own: it fires when the
// price reaches triggerPx from where it was at placement, for either side
// (https://www.okx.com/docs-v5/en/#order-book-trading-algo-trading-post-place-algo-order,
// ordType trigger; https://www.okx.com/help/what-is-a-trigger-order).
func TestStopDirection(t *testing.T) {
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }}, nil)
	r := connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret)
	connectortest.RunStopDirection(t, connectortest.OnEngine(r, f.sim.Engine(), "BTC-USDT-PERP", "BTC-USDT-SWAP", "95000"))
}

// TestMarketFillUnread: OKX answers a new order with ids only and reads of
// it can still say 51603 "Order does not exist" while it is in intake
// (https://www.okx.com/docs-v5/en/#error-code-rest-api-trade); the answer
// is then an unsettled outcome, never a zero fill.
func TestMarketFillUnread(t *testing.T) {
	var hidden atomic.Bool
	f := newFixtureWrapped(t, sim.Config{}, nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hidden.Load() && r.Method == http.MethodGet && r.URL.Path == "/api/v5/trade/order" {
				_, _ = w.Write([]byte(`{"code":"51603","msg":"Order does not exist","data":[]}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	f.a.c.Wait = func(context.Context, time.Duration) error { return nil }
	r := connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret)
	connectortest.RunUnreadFill(t, r, "BTC-USDT-PERP", "0.01", hidden.Store)
}

// TestNumbersAsStringsOrNumbers: a fill reads the same whether its figures
// and times come as strings (OKX's documented form,
// https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-transaction-details-last-3-days)
// or numbers.
func TestNumbersAsStringsOrNumbers(t *testing.T) {
	im := instMeta{ctVal: decimal.RequireFromString("0.01"), lotSz: decimal.RequireFromString("1")}
	connectortest.SameFill(t, func(b []byte) (contract.Fill, error) {
		var f fill
		err := json.Unmarshal(b, &f)
		return fillFromWire(f, im), err
	},
		`{"instId":"BTC-USDT-SWAP","tradeId":"12","ordId":"34","side":"buy","fillSz":"2","fillPx":"95000.5","fee":"-0.95","ts":"1735689600000","fillTime":"1735689600000"}`,
		`{"instId":"BTC-USDT-SWAP","tradeId":12,"ordId":34,"side":"buy","fillSz":2,"fillPx":95000.5,"fee":-0.95,"ts":1735689600000,"fillTime":1735689600000}`)
}

// TestFillsOlderThanThreeDays: /trade/fills holds the last 3 days only;
// older fills come from /trade/fills-history (3 months), up to the limit
// asked (both pages cited on the simulator's handlers).
func TestFillsOlderThanThreeDays(t *testing.T) {
	clock := testenv.NewClock(time.Now())
	f := newFixture(t, sim.Config{Now: clock.Now}, clock.Now)
	ctx := context.Background()
	m := f.market(t, "BTC-USDT-SWAP")
	buy := func(id string) {
		t.Helper()
		if _, err := f.a.PlaceMarketOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.MarketType,
			Side: contract.Buy, Size: decimal.RequireFromString("0.01"), ClientOrderID: id}); err != nil {
			t.Fatal(err)
		}
	}
	buy("old1")
	buy("old2")
	clock.Advance(4 * 24 * time.Hour)
	buy("new1")
	for _, tc := range []struct{ limit, want int }{{10, 3}, {2, 2}, {1, 1}} {
		res, err := f.a.GetFills(ctx, f.cred, m, tc.limit)
		if err != nil || len(res.Fills) != tc.want {
			t.Fatalf("getFills limit %d: %d fills (%v), want %d", tc.limit, len(res.Fills), err, tc.want)
		}
		seen := map[string]bool{}
		for _, fl := range res.Fills {
			if seen[fl.ID] {
				t.Fatalf("fill %s twice: %+v", fl.ID, res.Fills)
			}
			seen[fl.ID] = true
		}
	}
}

// TestBalanceMultiCurrency: in multi-currency and portfolio margin (acctLv
// 3, 4) collateral is counted across currencies in USD, so the USDT row's
// availEq says nothing about what the account can use. The answer below
// has the shape of the recorded one (issue 28: USDT availEq 0 while the
// account had 151,083 USD available) and the fields of
// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-balance
// (top-level availEq, adjEq, imr in USD for these modes).
func TestBalanceMultiCurrency(t *testing.T) {
	recorded := `[{"totalEq":"163412.55","adjEq":"158921.07","availEq":"151083.02","imr":"7838.05","mmr":"1203.11","upl":"-12.4",` +
		`"details":[{"ccy":"USDT","eq":"-2105.7","availEq":"0","availBal":"0","cashBal":"-2105.7"},` +
		`{"ccy":"BTC","eq":"1.7","availEq":"1.58","availBal":"1.58","cashBal":"1.7","eqUsd":"165518.25"}]}]`
	for _, lv := range []string{"3", "4"} {
		f := newFixture(t, sim.Config{}, nil)
		f.sim.SetAccountMode(testKey, lv, "net_mode")
		f.sim.RewriteNext(http.MethodGet, "/api/v5/account/balance", func([]byte) []byte { return []byte(recorded) })
		b, err := f.a.GetBalance(context.Background(), f.cred)
		if err != nil || b.FreeCollateral.String() != "151083.02" || b.Equity.String() != "163412.55" || b.AccountValue.String() != "163412.55" {
			t.Fatalf("acctLv %s balance %+v, %v; want free collateral 151083.02 and equity 163412.55 (USD, account level)", lv, b, err)
		}
	}
	// Futures mode (acctLv 2) keeps the USDT row: its margin is USDT's.
	f := newFixture(t, sim.Config{}, nil)
	b, err := f.a.GetBalance(context.Background(), f.cred)
	if err != nil || !b.FreeCollateral.IsPositive() {
		t.Fatalf("futures mode balance %+v, %v", b, err)
	}
}
