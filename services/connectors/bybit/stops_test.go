package bybit

import (
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/bybit/sim"
	"github.com/shopspring/decimal"
)

// TestStopDirection runs DESIGN §13's stop table against the simulator,
// which refuses a triggerDirection the mark contradicts as Bybit does
// (110092 "expect Rising, but trigger_price[..] <= current[..]", 110093
// for Falling: https://bybit-exchange.github.io/docs/v5/order/create-order
// triggerDirection, https://bybit-exchange.github.io/docs/v5/error).
func TestStopDirection(t *testing.T) {
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }}, nil)
	connectortest.RunStopDirection(t, connectortest.StopVenue{
		Replica: connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret),
		Market:  "BTC-USDT-PERP", Size: "0.01", Mark: decimal.RequireFromString("95000"), Step: decimal.RequireFromString("100"),
		SetMark: func(t testing.TB, mark decimal.Decimal) {
			if _, err := f.sim.Engine().SetMarkPrice("BTCUSDT", mark); err != nil {
				t.Fatal(err)
			}
		},
	})
}
