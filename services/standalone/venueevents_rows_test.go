package standalone

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	hlsim "github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	"github.com/perpgate/perpgate/services/connectors/paradex"
	paradexsim "github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// Rows of the account-events table (venueevents_test.go) for Hyperliquid
// and Paradex.

// startHyperliquidEvents: the simulator's BTC and ETH start at 6000 and
// 300, so the book's prices (ticks of 0.1 and 0.01) keep Hyperliquid's
// five significant figures. Its account stream needs no login: the
// connector checks the agent (userRole) first, and that is what a wrong
// key fails.
func startHyperliquidEvents(t *testing.T) *eventsVenue {
	d := decimal.RequireFromString
	s := hlsim.New(hlsim.Config{Seed: 7, Assets: []hlsim.Asset{
		{Name: "BTC", SzDecimals: 5, MaxLeverage: 40, StartPrice: d("6000")},
		{Name: "ETH", SzDecimals: 4, MaxLeverage: 25, StartPrice: d("300")},
	}})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	g := startGateway(t, func(c *Config) { c.Hyperliquid.URL, c.Hyperliquid.WeightPerMinute = srv.URL, 12000 })
	if err := s.AddUser(hlTestAccount, decimal.NewFromInt(100_000_000)); err != nil {
		t.Fatal(err)
	}
	s.ApproveAgent(hlTestAccount, hlAddress(t, hlTestAgentKey), true)
	acct := g.Bootstrap().AccountID
	return &eventsVenue{testGateway: g, x: contract.Hyperliquid, eng: s.Engine(), btc: "BTC", eth: "ETH",
		key:     g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		cred:    g.newCredential(acct, contract.Hyperliquid, contract.Mainnet, hlSecret(hlTestAccount, hlTestAgentKey, "")),
		badCred: g.newCredential(acct, contract.Hyperliquid, contract.Mainnet, hlSecret(hlTestAccount, hlStrangerKey, "")),
		refusal: "is not an API wallet (agent) approved by account",
		drop:    s.DropStreams,
		hits:    func(types ...string) int { return s.InfoRequests(types...) },
		polls:   []string{"frontendOpenOrders", "openOrders", "clearinghouseState"},
		logins:  func() int { return s.InfoRequests("userRole") },
		canon:   "BTC-USD-PERP", hashedClientIDs: true}
}

// startParadexEvents: the login a wrong key fails is POST /auth (the
// socket's auth takes the JWT it gives).
func startParadexEvents(t *testing.T) *eventsVenue {
	p := startParadex(t, paradexsim.Config{}, nil)
	richAccount(t, p.sim.Engine(), pdxAddress)
	acct := p.Bootstrap().AccountID
	return &eventsVenue{testGateway: p.testGateway, x: contract.Paradex, eng: p.sim.Engine(), btc: "BTC-USD-PERP", eth: "ETH-USD-PERP",
		key:  p.live,
		cred: p.mainCred,
		badCred: p.newCredential(acct, contract.Paradex, contract.Mainnet,
			`{"accountAddress":"`+pdxAddress+`","starkPrivateKey":"0x2df9494fb7408922820789bb930a61fc246e8d20206e161cd6576b5c48f8c5b"}`),
		refusal: "does not sign for account",
		drop:    p.sim.DropStreams, hits: simHits(p.sim.Hits),
		polls: []string{"/v1/orders", "/v1/positions"},
		logins: func() int {
			return p.sim.Hits(http.MethodPost, "/v1/auth") + p.sim.Hits(http.MethodPost, "/v1/auth/{publicKey}")
		},
		watchesPairs: true, canon: "BTC-USD-PERP"}
}

// startHyperliquidKill is the kill scenario's Hyperliquid row.
func startHyperliquidKill(t *testing.T) killVenue {
	s := hlsim.New(hlsim.Config{Seed: 7})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	if err := s.AddUser(hlTestAccount, decimal.NewFromInt(100_000_000)); err != nil {
		t.Fatal(err)
	}
	s.ApproveAgent(hlTestAccount, hlAddress(t, hlTestAgentKey), true)
	cfg := hyperliquid.DefaultConfig()
	cfg.URL = srv.URL
	return killVenue{x: contract.Hyperliquid, secret: hlSecret(hlTestAccount, hlTestAgentKey, ""),
		adapter: func() connector.Adapter { return hyperliquid.NewAdapter(cfg, &http.Client{}) }}
}

// startParadexKill is the kill scenario's Paradex row.
func startParadexKill(t *testing.T) killVenue {
	s := paradexsim.New(paradexsim.Config{Accounts: map[string]string{pdxAddress: pdxPub}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	richAccount(t, s.Engine(), pdxAddress)
	cfg := paradex.DefaultConfig()
	cfg.MainnetURL, cfg.TestnetURL = srv.URL+"/v1", srv.URL+"/v1"
	return killVenue{x: contract.Paradex, secret: `{"accountAddress":"` + pdxAddress + `","starkPrivateKey":"` + pdxKey + `"}`,
		adapter: func() connector.Adapter { return paradex.NewAdapter(cfg, &http.Client{}) }}
}
