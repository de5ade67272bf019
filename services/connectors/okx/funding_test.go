package okx

import (
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/okx/sim"
)

func TestCapabilitiesDeclared(t *testing.T) {
	connectortest.CheckCapabilities(t, NewAdapter(DefaultConfig(), nil))
}

// TestFundingPaymentsPaged: funding fee bills (type 8) of
// bills-archive read page after page with after=billId (the simulator
// answers two a page).
func TestFundingPaymentsPaged(t *testing.T) {
	clock := testenv.NewClock(time.Now().Truncate(8 * time.Hour).Add(8*time.Hour - time.Minute))
	f := newFixture(t, sim.Config{PageCap: 2, Now: clock.Now}, clock.Now)
	connectortest.CheckFundingPayments(t, connectortest.FundingCase{Adapter: f.a, Cred: f.cred, Engine: f.sim.Engine(),
		Account: testKey, Clock: clock, Interval: 8 * time.Hour})
}
