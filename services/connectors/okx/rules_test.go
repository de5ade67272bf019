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
	connectortest.RunStopDirection(t, connectortest.StopVenue{
		Replica: connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret),
		Market:  "BTC-USDT-PERP", Size: "0.01", Mark: decimal.RequireFromString("95000"), Step: decimal.RequireFromString("100"),
		SetMark: func(t testing.TB, mark decimal.Decimal) {
			if _, err := f.sim.Engine().SetMarkPrice("BTC-USDT-SWAP", mark); err != nil {
				t.Fatal(err)
			}
		},
	})
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
	f.a.c.wait = func(context.Context, time.Duration) error { return nil }
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
