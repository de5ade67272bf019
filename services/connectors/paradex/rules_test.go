package paradex

import (
	"context"
	"testing"
	"time"

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

// TestMarketFillUnread: Paradex answers 201 with status NEW and runs its
// risk checks afterwards (https://docs.paradex.trade/api-reference/prod/orders/new:
// "queues the order for risk checks"); while the order stays NEW past the
// read-back the answer is an unsettled outcome, never a zero fill.
func TestMarketFillUnread(t *testing.T) {
	f := newFixture(t, sim.Config{})
	f.a.c.wait = func(context.Context, time.Duration) error { return nil }
	r := connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret)
	connectortest.RunUnreadFill(t, r, "BTC-USD-PERP", "0.01", func(on bool) {
		if on {
			f.sim.HoldIntake(1000)
		} else {
			f.sim.HoldIntake(0)
		}
	})
}
