package hyperliquid_test

import (
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
)

func TestCapabilitiesDeclared(t *testing.T) {
	connectortest.CheckCapabilities(t, hyperliquid.NewAdapter(hyperliquid.Config{}, nil))
}

// TestFundingPaymentsPaged: userFunding read forward page after page (the
// simulator answers four entries a page: more than the coins paid in one
// millisecond, as Hyperliquid's 500 are, so a page starting at the last
// time read moves on), with rate and position size.
func TestFundingPaymentsPaged(t *testing.T) {
	clock := testenv.NewClock(time.Now().Truncate(time.Hour).Add(time.Hour - time.Minute))
	s, url := simVenue(t, sim.Config{Seed: 3, Now: clock.Now, PageCap: 4})
	a := hyperliquid.NewAdapter(hyperliquid.Config{URL: url}, nil, hyperliquid.WithClock(clock.Now))
	connectortest.CheckFundingPayments(t, connectortest.FundingCase{Adapter: a, Cred: credential("a", accountA, agentKeyA),
		Engine: s.Engine(), Account: accountA, Clock: clock, Interval: time.Hour, Detail: true})
}
