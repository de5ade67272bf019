package paradex

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
)

func TestCapabilitiesDeclared(t *testing.T) {
	connectortest.CheckCapabilities(t, NewAdapter(DefaultConfig(), nil))
}

// TestFundingPaymentsPaged: GET /funding/payments per market (Paradex
// needs one: the markets of the account's positions), page after page
// with its cursor (the simulator answers one a page).
func TestFundingPaymentsPaged(t *testing.T) {
	clock := testenv.NewClock(time.Now().Truncate(8 * time.Hour).Add(8*time.Hour - time.Minute))
	s := sim.New(sim.Config{Now: clock.Now, Accounts: map[string]string{testAddress: testPub}, PageCap: 1})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.MainnetURL, cfg.TestnetURL, cfg.Now = srv.URL+"/v1", srv.URL+"/v1", clock.Now
	connectortest.CheckFundingPayments(t, connectortest.FundingCase{Adapter: NewAdapter(cfg, srv.Client()),
		Cred: credential("cred-1", testAddress, testKey), Engine: s.Engine(), Account: testAddress, Clock: clock, Interval: 8 * time.Hour})
}
