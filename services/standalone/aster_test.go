package standalone

import (
	"net/http"
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

// TestAsterFailures: through the edge, an unapproved API wallet (the
// refused signer), a nonce Aster refuses again after the connector's
// retry (as when replicas do not share Redis), an HTML 500 page and a
// venue clock 10 minutes ahead each end as documented: valid:false or
// EXCHANGE_ERROR with Aster's code, never a success or a panic, and
// nothing placed; the skewed clock is measured and signed calls pass.
func TestAsterFailures(t *testing.T) {
	a := startAster(t, astersim.Config{Now: func() time.Time { return time.Now().Add(10 * time.Minute) }}, nil)
	eng, user := a.sim.Engine(), strings.ToLower(asterMainUser)
	const refusedKey = "0x7a1f3c5e9b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a"
	refused := a.newCredential(a.Bootstrap().AccountID, contract.Aster, contract.Mainnet, asterSecret(asterMainUser, refusedKey))
	wantRejected(t, a.ok(map[string]any{"operation": "testCredentials", "credentialId": refused}), contract.Aster, refusedKey[2:])
	order := func(extra map[string]any) map[string]any {
		body := map[string]any{"operation": "placeLimitOrder", "market": "ETH", "side": "BUY", "size": "0.01", "price": "2000"}
		for k, v := range extra {
			body[k] = v
		}
		return body
	}
	nonce := astersim.Failure{Status: 400, Code: -4225, Msg: "Nonce Expired"}
	tests := []struct {
		name   string
		inject func()
		body   map[string]any
		reason contract.Reason
		code   any
	}{
		{name: "refused signer", body: order(map[string]any{"credentialId": refused}), reason: contract.ReasonAuthenticationFailed, code: "-2015"},
		{name: "nonce refused twice", inject: func() {
			a.sim.FailNext("POST", "/fapi/v3/order", nonce)
			a.sim.FailNext("POST", "/fapi/v3/order", nonce)
		}, body: order(nil), reason: contract.ReasonAuthenticationFailed, code: "-4225"},
		{name: "HTML 500 page", inject: func() {
			a.sim.FailNext("GET", "/fapi/v3/accountWithJoinMargin", astersim.Failure{Status: 500, HTML: true})
		}, body: map[string]any{"operation": "getBalance"}, reason: contract.ReasonUpstreamUnavailable, code: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.inject != nil {
				tt.inject()
			}
			r := a.fails(tt.body, http.StatusBadGateway, contract.CodeExchangeError, tt.reason)
			if r.body["exchangeCode"] != tt.code {
				t.Errorf("exchangeCode %v, want %v: %s", r.body["exchangeCode"], tt.code, r.raw)
			}
			if open, _ := eng.OpenOrders(user, ""); len(open) != 0 {
				t.Errorf("placed %v", open)
			}
		})
	}
	// A placement answered with an HTML 500 page: its outcome is unknown
	// until the connector looked the clientOrderId up; never a success.
	a.sim.FailNext("POST", "/fapi/v3/order", astersim.Failure{Status: 500, HTML: true})
	r := a.fails(order(map[string]any{"clientOrderId": "html-500"}), http.StatusBadGateway, contract.CodeExchangeError, contract.ReasonUpstreamUnavailable)
	if msg, _ := r.body["error"].(string); !strings.Contains(msg, "non-JSON") || !strings.Contains(msg, "html-500") {
		t.Errorf("placement after an HTML 500: %s", r.raw)
	}
	if r := a.ok(order(nil)); r["status"] != "OPEN" {
		t.Errorf("placement with Aster 10 min ahead: %v", r)
	}
	if a.sim.Hits("GET", "/fapi/v3/time") == 0 {
		t.Error("server time never asked")
	}
}
