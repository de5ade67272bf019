package standalone

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	asterconn "github.com/perpgate/perpgate/services/connectors/aster"
	astersim "github.com/perpgate/perpgate/services/connectors/aster/sim"
	"github.com/perpgate/perpgate/services/keys"
)

// Throwaway Aster users and their API wallets (the shared signing
// vectors' and the Aster docs' demonstration pair): main for the mainnet
// credential, test for the testnet one.
const (
	asterMainUser   = "0x1400C59765bcf62EBbcc03893e9F13B5E9668B80"
	asterMainKey    = "0x5e6255832700a83a54394f0236d981440e013e06fe949316b6990a3af15f84c0"
	asterMainSigner = "0xaF4Bbc28D5B3A260237505FB22bc02bc1fd52e0B"
	asterTestUser   = "0x63DD5aCC6b1aa0f563956C0e534DD30B6dcF7C4e"
	asterTestKey    = "0x4fd0a42218f3eae43a6ce26d22544e986139a01e5b34a62db53757ffca81bae1"
	asterTestSigner = "0x21cF8Ae13Bb72632562c6Fff438652Ba1a151bb0"
)

// asterEnv is a gateway whose Aster connector talks to a simulator over
// HTTP (REST and websockets on one host, as PERPGATE_ASTER_URL sets it).
type asterEnv struct {
	*binanceEnv // the same helpers: do, ok, fails
	sim         *astersim.Server
}

func asterSecret(user, key string) string {
	return `{"userAddress":"` + user + `","signerPrivateKey":"` + key + `"}`
}

func startAster(t *testing.T, cfg astersim.Config, now func() time.Time) *asterEnv {
	t.Helper()
	cfg.Agents = map[string]string{asterMainSigner: asterMainUser, asterTestSigner: asterTestUser}
	if now != nil {
		cfg.Now = now
	}
	s := astersim.New(cfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	g := startGateway(t, func(c *Config) {
		var err error
		c.Aster, err = asterLoad(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		c.Aster.Now = now
	})
	acct := g.Bootstrap().AccountID
	return &asterEnv{sim: s, binanceEnv: &binanceEnv{
		testGateway: g,
		live:        g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		mainCred:    g.newCredential(acct, contract.Aster, contract.Mainnet, asterSecret(asterMainUser, asterMainKey)),
		testCred:    g.newCredential(acct, contract.Aster, contract.Testnet, asterSecret(asterTestUser, asterTestKey)),
	}}
}

// TestAsterAllOperations runs allOperations on Aster: EIP-712 signed
// requests, stops and protection legs as ordinary orders with stopPrice
// (plain order ids), and no open interest in getMarketsWithFunding.
func TestAsterAllOperations(t *testing.T) {
	clock := testenv.NewClock(time.Now().Truncate(time.Second))
	a := startAster(t, astersim.Config{}, clock.Now)
	// POST /fapi/v3/order before the protection legs: the limit, the
	// market order, the stop and the two legs.
	allOperations(t, binanceLike{x: contract.Aster, b: a.binanceEnv, eng: a.sim.Engine(), acct: strings.ToLower(asterMainUser),
		clock: clock, hits: a.sim.Hits, stopPrefix: "", stopPost: "/fapi/v3/order", stopPosts: 5, openInterest: false})
}

// TestAsterExtensions: funding from GET /fapi/v3/income FUNDING_FEE (no
// rate or size there); realizedPnl from userTrades.
func TestAsterExtensions(t *testing.T) {
	clock := testenv.NewClock(nextFunding(time.Now(), 8*time.Hour).Add(-time.Minute))
	a := startAster(t, astersim.Config{PageCap: 2}, clock.Now)
	venueExt{x: contract.Aster, g: a.testGateway, key: a.live, cred: a.mainCred, engine: a.sim.Engine(), acct: strings.ToLower(asterMainUser),
		clock: clock, interval: 8 * time.Hour, market: "BTC", size: "0.01", places: 8, pnl: true}.run(t)
}

// asterLoad is the Aster configuration PERPGATE_ASTER_URL=url gives.
func asterLoad(url string) (asterconn.Config, error) {
	return asterconn.LoadConfig(func(k string) (string, bool) {
		if k == "PERPGATE_ASTER_URL" {
			return url, true
		}
		return "", false
	})
}
