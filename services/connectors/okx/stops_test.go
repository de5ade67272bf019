package okx

import (
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
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
