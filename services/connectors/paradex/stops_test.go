package paradex

import (
	"testing"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/shopspring/decimal"
)

// TestStopDirection runs DESIGN §13's stop table against the simulator.
// Paradex triggers a STOP_MARKET order when the mark price crosses
// trigger_price (https://docs.paradex.trade/trading/orders/order-types/stop-order),
// from where the mark was at placement: the recorded answers of issue 28
// show a BUY stop below the mark accepted and fired on the way down.
func TestStopDirection(t *testing.T) {
	f := newFixture(t, sim.Config{})
	connectortest.RunStopDirection(t, connectortest.StopVenue{
		Replica: connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret),
		Market:  "BTC-USD-PERP", Size: "0.01", Mark: decimal.RequireFromString("95000"), Step: decimal.RequireFromString("100"),
		SetMark: func(t testing.TB, mark decimal.Decimal) {
			if _, err := f.sim.Engine().SetMarkPrice("BTC-USD-PERP", mark); err != nil {
				t.Fatal(err)
			}
		},
	})
}
