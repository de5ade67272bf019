package bybit

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/bybit/sim"
)

// TestStopDirection runs DESIGN §13's stop table against the simulator,
// which refuses a triggerDirection the mark contradicts as Bybit does
// (110092 "expect Rising, but trigger_price[..] <= current[..]", 110093
// for Falling: https://bybit-exchange.github.io/docs/v5/order/create-order
// triggerDirection, https://bybit-exchange.github.io/docs/v5/error).
func TestStopDirection(t *testing.T) {
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }}, nil)
	r := connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret)
	connectortest.RunStopDirection(t, connectortest.OnEngine(r, f.sim.Engine(), "BTC-USDT-PERP", "BTCUSDT", "95000"))
}

// TestMarketFillUnread: Bybit's create answers ids only and the order is
// processed asynchronously, so a read-back can find nothing
// (https://bybit-exchange.github.io/docs/v5/order/create-order: "the order
// is processed asynchronously"); the answer is then an unsettled outcome,
// never a zero fill.
func TestMarketFillUnread(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	f.a.c.Wait = func(context.Context, time.Duration) error { return nil }
	r := connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret)
	connectortest.RunUnreadFill(t, r, "BTC-USDT-PERP", "0.01", func(on bool) {
		if on {
			f.sim.LagReads(1000)
		} else {
			f.sim.LagReads(0)
		}
	})
}

// TestNumbersAsStringsOrNumbers: an execution reads the same whether its
// figures and time come as strings (Bybit's documented form,
// https://bybit-exchange.github.io/docs/v5/order/execution) or numbers.
func TestNumbersAsStringsOrNumbers(t *testing.T) {
	connectortest.SameFill(t, func(b []byte) (contract.Fill, error) {
		var e execution
		err := json.Unmarshal(b, &e)
		return fillFromWire(e), err
	},
		`{"symbol":"BTCUSDT","orderId":"o-1","side":"Buy","execId":"e-1","execPrice":"95000.5","execQty":"0.01","execFee":"0.52","execType":"Trade","execTime":"1735689600000"}`,
		`{"symbol":"BTCUSDT","orderId":"o-1","side":"Buy","execId":"e-1","execPrice":95000.5,"execQty":0.01,"execFee":0.52,"execType":"Trade","execTime":1735689600000}`)
}

// TestFillsPastOneHundred: /v5/execution/list answers at most 100 rows a
// call and pages with cursor/nextPageCursor
// (https://bybit-exchange.github.io/docs/v5/order/execution), so a limit
// above 100 reads on to the limit.
func TestFillsPastOneHundred(t *testing.T) {
	f := newFixture(t, sim.Config{Quota: map[string]int{"/v5/order/create": 1000, "/v5/order/realtime": 1000, "/v5/execution/list": 1000}}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	f.a.c.Wait = func(context.Context, time.Duration) error { return nil }
	for i := range 130 {
		side := contract.Buy
		if i%2 == 1 {
			side = contract.Sell
		}
		if _, err := f.a.PlaceMarketOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.MarketType,
			Side: side, Size: d("0.001"), ClientOrderID: fmt.Sprintf("f-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ limit, want int }{{500, 130}, {120, 120}, {100, 100}, {7, 7}} {
		res, err := f.a.GetFills(ctx, f.cred, m, tc.limit)
		if err != nil || len(res.Fills) != tc.want {
			t.Fatalf("getFills limit %d: %d fills (%v), want %d", tc.limit, len(res.Fills), err, tc.want)
		}
	}
}

// TestVenueCancelIsRejection: an order Bybit cancelled itself with nothing
// filled is a rejection whatever its rejectReason (listed on
// https://bybit-exchange.github.io/docs/v5/enum#rejectreason, or new); the
// owner's cancel stays CANCELLED, and so does one that filled a part.
func TestVenueCancelIsRejection(t *testing.T) {
	for _, tt := range []struct {
		reason, filled string
		want           bool
	}{
		{"EC_PostOnlyWillTakeLiquidity", "0", true},
		{"EC_NoImmediateQtyToFill", "0", true},
		{"EC_SomethingNew", "0", true},
		{"EC_PerCancelRequest", "0", false},
		{"EC_NoError", "0", false},
		{"EC_NoImmediateQtyToFill", "0.5", false},
	} {
		var o order
		raw := fmt.Sprintf(`{"orderStatus":"Cancelled","rejectReason":%q,"cumExecQty":%q}`, tt.reason, tt.filled)
		if err := json.Unmarshal([]byte(raw), &o); err != nil {
			t.Fatal(err)
		}
		if got := venueCancelled(o); got != tt.want {
			t.Errorf("%s filled %s: rejected %v, want %v", tt.reason, tt.filled, got, tt.want)
		}
	}
}
