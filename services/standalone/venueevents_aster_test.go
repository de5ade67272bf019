package standalone

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	asterconn "github.com/perpgate/perpgate/services/connectors/aster"
	astersim "github.com/perpgate/perpgate/services/connectors/aster/sim"
	"github.com/perpgate/perpgate/services/keys"
)

// Aster's rows of the account-events table (venueevents_test.go) and the
// kill table (venuefeedkill_test.go). Aster is Binance-shaped: the
// private stream is the listen-key user data stream, and the login a
// refused credential fails is POST /fapi/v3/listenKey.

// asterSim is a simulator with the throwaway users' API wallets approved,
// served over HTTP, and the main user's account rich enough to take a
// book level.
func asterSim(t *testing.T) (*astersim.Server, string) {
	t.Helper()
	s := astersim.New(astersim.Config{Agents: map[string]string{asterMainSigner: asterMainUser, asterTestSigner: asterTestUser}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	richAccount(t, s.Engine(), strings.ToLower(asterMainUser))
	return s, srv.URL
}

// startAsterEvents: the bad credential signs for the main user with the
// test user's API wallet, an agent Aster has not approved for that user.
func startAsterEvents(t *testing.T) *eventsVenue {
	s, url := asterSim(t)
	g := startGateway(t, func(c *Config) {
		var err error
		if c.Aster, err = asterLoad(url); err != nil {
			t.Fatal(err)
		}
	})
	acct := g.Bootstrap().AccountID
	return &eventsVenue{testGateway: g, x: contract.Aster, eng: s.Engine(), btc: "BTCUSDT", eth: "ETHUSDT",
		key:     g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		cred:    g.newCredential(acct, contract.Aster, contract.Mainnet, asterSecret(asterMainUser, asterMainKey)),
		badCred: g.newCredential(acct, contract.Aster, contract.Mainnet, asterSecret(asterMainUser, asterTestKey)),
		refusal: "Invalid API-key, IP, or permissions for action",
		drop:    s.DropPrivate, hits: simHits(s.Hits),
		polls:        []string{"/fapi/v3/openOrders", "/fapi/v3/positionRisk"},
		logins:       func() int { return s.Hits(http.MethodPost, "/fapi/v3/listenKey") },
		watchesPairs: true}
}

// startAsterKill is the kill scenario's Aster row. The two replicas sign
// for one API wallet, so they share a nonce counter, as deployed replicas
// share Redis (NewRedisNonces).
func startAsterKill(t *testing.T) killVenue {
	_, url := asterSim(t)
	cfg, err := asterLoad(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Nonces = asterconn.NewNonces()
	return killVenue{x: contract.Aster, secret: asterSecret(asterMainUser, asterMainKey),
		adapter: func() connector.Adapter { return asterconn.NewAdapter(cfg, &http.Client{}) }}
}
