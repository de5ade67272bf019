package binance

import (
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
)

func TestCapabilitiesDeclared(t *testing.T) {
	connectortest.CheckCapabilities(t, NewAdapter(DefaultConfig(), nil))
}

// TestFundingPaymentsPaged: GET /fapi/v1/income read page after page (the
// simulator answers two entries a page) from since to now.
func TestFundingPaymentsPaged(t *testing.T) {
	clock := testenv.NewClock(time.Now().Truncate(8 * time.Hour).Add(8*time.Hour - time.Minute))
	f := newFixture(t, sim.Config{PageCap: 2, Now: clock.Now}, clock.Now)
	connectortest.CheckFundingPayments(t, connectortest.FundingCase{Adapter: f.a, Cred: f.cred, Engine: f.sim.Engine(),
		Account: testKey, Clock: clock, Interval: 8 * time.Hour, Places: 8})
}
