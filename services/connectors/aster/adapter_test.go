package aster

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/aster/sim"
	"github.com/shopspring/decimal"
)

// The test credential: throwaway user and API wallet (the first vector's).
const (
	testUser      = "0x1400C59765bcf62EBbcc03893e9F13B5E9668B80"
	testSignerKey = "0x5e6255832700a83a54394f0236d981440e013e06fe949316b6990a3af15f84c0"
	testSigner    = "0xaF4Bbc28D5B3A260237505FB22bc02bc1fd52e0B"
	// otherKey is a valid key whose wallet nobody approved.
	otherKey = "0x4fd0a42218f3eae43a6ce26d22544e986139a01e5b34a62db53757ffca81bae1"
)

type fixture struct {
	sim  *sim.Server
	srv  *httptest.Server
	a    *Adapter
	cred connector.Credential
}

func newFixture(t *testing.T, simCfg sim.Config, mutate ...func(*Config)) *fixture {
	t.Helper()
	simCfg.Agents = map[string]string{testSigner: testUser}
	s := sim.New(simCfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.MainnetURL, cfg.TestnetURL = srv.URL, srv.URL
	cfg.MainnetStreamURL, cfg.TestnetStreamURL = venuekit.WSURL(srv.URL), venuekit.WSURL(srv.URL)
	for _, m := range mutate {
		m(&cfg)
	}
	return &fixture{sim: s, srv: srv, a: NewAdapter(cfg, srv.Client()), cred: credential(contract.Mainnet, testUser, testSignerKey)}
}

func credential(env contract.Environment, user, key string) connector.Credential {
	raw, _ := json.Marshal(map[string]string{"userAddress": user, "signerPrivateKey": key})
	return connector.Credential{CredentialInfo: contract.CredentialInfo{ID: "c1", Exchange: contract.Aster, Environment: env}, Secret: raw}
}

func (f *fixture) market(t *testing.T, native string) connector.Market {
	t.Helper()
	list, err := f.a.Markets(context.Background(), f.cred)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.Native == native {
			return m
		}
	}
	t.Fatalf("no market %s in %v", native, list)
	return connector.Market{}
}

func TestCapabilitiesDeclared(t *testing.T) {
	connectortest.CheckCapabilities(t, NewAdapter(DefaultConfig(), nil))
}

// TestTestCredentials: an approved API wallet is valid on both chain ids;
// a key nobody approved (the refused signer) and a user the wallet does
// not sign for are valid:false with Aster's code, and a trading call with
// them is AUTHENTICATION_FAILED, never a success.
func TestTestCredentials(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	tests := []struct {
		name string
		cred connector.Credential
		want bool
	}{
		{"approved", f.cred, true},
		{"testnet chain id", credential(contract.Testnet, testUser, testSignerKey), true},
		{"refused signer", credential(contract.Mainnet, testUser, otherKey), false},
		{"another user", credential(contract.Mainnet, "0x63dd5acc6b1aa0f563956c0e534dd30b6dcf7c4e", testSignerKey), false},
		{"not a key", credential(contract.Mainnet, testUser, "0x1234"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.a.TestCredentials(ctx, tt.cred)
			if got != tt.want || (tt.want && err != nil) || (!tt.want && !connector.IsRejected(err)) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), strings.TrimPrefix(otherKey, "0x")) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
	m := f.market(t, "BTCUSDT")
	_, err := f.a.PlaceMarketOrder(ctx, credential(contract.Mainnet, testUser, otherKey), connector.OrderRequest{Market: m,
		Type: connector.MarketType, Side: contract.Buy, Size: decimal.RequireFromString("0.01"), ClientOrderID: "refused1"})
	if ce := testenv.WantUpstream(t, err, contract.ReasonAuthenticationFailed); ce.ExchangeCode != "-2015" {
		t.Errorf("refused signer: exchange code %s, want -2015", ce.ExchangeCode)
	}
	if open, _ := f.sim.Engine().OpenOrders(strings.ToLower(testUser), ""); len(open) != 0 {
		t.Errorf("the refused signer placed %v", open)
	}
}

// TestClockSkew: Aster's clock is 5 minutes ahead, far outside the nonce
// window; the offset is measured first (nonces follow Aster's clock), and
// measured again when Aster answers -4225 after its clock jumped further
// ahead. A nonce refused again after the resync is AUTHENTICATION_FAILED
// with Aster's code.
func TestClockSkew(t *testing.T) {
	var mu sync.Mutex
	skew := 5 * time.Minute
	simNow := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(skew) }
	f := newFixture(t, sim.Config{Now: simNow})
	ctx := context.Background()
	if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
		t.Fatalf("balance with Aster 5 min ahead: %v", err)
	}
	if n := f.sim.Hits("GET", "/fapi/v3/time"); n != 1 {
		t.Errorf("server time asked %d times, want 1", n)
	}
	mu.Lock()
	skew = 10 * time.Minute
	mu.Unlock()
	if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
		t.Fatalf("balance after Aster's clock jumped ahead: %v", err)
	}
	if n := f.sim.Hits("GET", "/fapi/v3/time"); n != 2 {
		t.Errorf("server time asked %d times, want 2 (resync after -4225)", n)
	}
	if n := f.sim.Hits("GET", "/fapi/v3/accountWithJoinMargin"); n != 3 {
		t.Errorf("account asked %d times, want 3 (one retried)", n)
	}
	ahead := sim.Failure{Status: 400, Code: -1021, Msg: "Timestamp for this request was 1000ms ahead of the server's time."}
	f.sim.FailNext("GET", "/fapi/v3/accountWithJoinMargin", ahead)
	f.sim.FailNext("GET", "/fapi/v3/accountWithJoinMargin", ahead)
	_, err := f.a.GetBalance(ctx, f.cred)
	if ce := testenv.WantUpstream(t, err, contract.ReasonAuthenticationFailed); ce.ExchangeCode != "-1021" || !strings.Contains(ce.Message, "clock") {
		t.Errorf("nonce refused twice: %v", ce)
	}
}

// TestHTMLServerError: a 500 answered with an HTML page is
// UPSTREAM_UNAVAILABLE (outcome unknown), never a success or a panic, for
// a read and for a placement.
func TestHTMLServerError(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	f.sim.FailNext("GET", "/fapi/v3/accountWithJoinMargin", sim.Failure{Status: 500, HTML: true})
	_, err := f.a.GetBalance(ctx, f.cred)
	if ce := testenv.WantUpstream(t, err, contract.ReasonUpstreamUnavailable); !strings.Contains(ce.Message, "non-JSON") {
		t.Errorf("message %q does not say the answer was not JSON", ce.Message)
	}
	f.sim.FailNext("POST", "/fapi/v3/order", sim.Failure{Status: 500, HTML: true})
	_, err = f.a.PlaceLimitOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("90000"), ClientOrderID: "html1"})
	if !connector.Ambiguous(err) {
		t.Errorf("placement after an HTML 500: %v, want an unknown outcome", err)
	}
}

// TestNoncesSharedByReplicas: two adapters (replicas) signing for one API
// wallet at the same instant never collide with the shared Redis counter;
// with a counter each they do, and a nonce Aster refused again after the
// retry is AUTHENTICATION_FAILED with its code -4225, not a success.
func TestNoncesSharedByReplicas(t *testing.T) {
	rdb, prefix := testenv.RedisPrefix(t)
	still := time.Now()
	frozen := func() time.Time { return still }
	shared := NewRedisNonces(rdb, prefix)
	f := newFixture(t, sim.Config{Now: frozen}, func(c *Config) { c.Now, c.Nonces = frozen, shared })
	cfg := f.a.cfg
	second := NewAdapter(cfg, f.srv.Client())
	ctx := context.Background()
	for i := range 20 {
		for _, a := range []*Adapter{f.a, second} {
			if _, err := a.GetBalance(ctx, f.cred); err != nil {
				t.Fatalf("call %d with a shared counter: %v", i, err)
			}
		}
	}
	// Apart: each replica's own counter hands out the same nonces.
	f = newFixture(t, sim.Config{Now: frozen}, func(c *Config) { c.Now = frozen })
	cfg = f.a.cfg
	cfg.Nonces = NewNonces()
	one := NewAdapter(cfg, f.srv.Client())
	cfg.Nonces = NewNonces()
	two := NewAdapter(cfg, f.srv.Client())
	// one uses the nonces t and t+1; two's first try (t) and its retry
	// after the resync (t+1) repeat them, and the venue refuses both.
	for range 2 {
		if _, err := one.GetBalance(ctx, f.cred); err != nil {
			t.Fatal(err)
		}
	}
	_, err := two.GetBalance(ctx, f.cred)
	if ce := testenv.WantUpstream(t, err, contract.ReasonAuthenticationFailed); ce.ExchangeCode != "-4225" {
		t.Errorf("colliding nonce: exchange code %s, want -4225", ce.ExchangeCode)
	}
}

// TestStopDirection runs DESIGN §13's stop table: the simulator answers a
// conditional order already through its trigger -2021 (fact sheet §4
// placeStopOrder).
func TestStopDirection(t *testing.T) {
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }})
	r := connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret)
	connectortest.RunStopDirection(t, connectortest.OnEngine(r, f.sim.Engine(), "BTC-USDT-PERP", "BTCUSDT", "95000"))
}

// TestFundingPaymentsPaged: GET /fapi/v3/income read page after page.
func TestFundingPaymentsPaged(t *testing.T) {
	clock := testenv.NewClock(time.Now().Truncate(8 * time.Hour).Add(8*time.Hour - time.Minute))
	f := newFixture(t, sim.Config{PageCap: 2, Now: clock.Now}, func(c *Config) { c.Now = clock.Now })
	connectortest.CheckFundingPayments(t, connectortest.FundingCase{Adapter: f.a, Cred: f.cred, Engine: f.sim.Engine(),
		Account: strings.ToLower(testUser), Clock: clock, Interval: 8 * time.Hour, Places: 8})
}

// TestNumbersAsStringsOrNumbers: Aster sends ids and times as strings in
// one answer and numbers in another (fact sheet §0 #9).
func TestNumbersAsStringsOrNumbers(t *testing.T) {
	connectortest.SameFill(t, func(b []byte) (contract.Fill, error) {
		var u fapi.UserTrade
		err := json.Unmarshal(b, &u)
		return fillFromWire(u), err
	},
		`{"id":"698759","orderId":"25851813","symbol":"BTCUSDT","side":"BUY","price":"7819.01","qty":"0.002","commission":"0.00312760","time":"1569514978020"}`,
		`{"id":698759,"orderId":25851813,"symbol":"BTCUSDT","side":"BUY","price":7819.01,"qty":0.002,"commission":0.00312760,"time":1569514978020}`)
}

// TestHedgeModeRefused: an account in hedge position mode gets
// INVALID_REQUEST saying so, and nothing is placed.
func TestHedgeModeRefused(t *testing.T) {
	f := newFixture(t, sim.Config{})
	f.sim.SetHedgeMode(testUser, true)
	m := f.market(t, "BTCUSDT")
	_, err := f.a.PlaceLimitOrder(context.Background(), f.cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy,
		Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("90000"), ClientOrderID: "hedge-1"})
	ce, ok := contract.AsError(err)
	if !ok || ce.Code != contract.CodeInvalidRequest || !strings.Contains(ce.Message, "hedge position mode") {
		t.Fatalf("hedge mode: %v", err)
	}
	if open, _ := f.sim.Engine().OpenOrders(strings.ToLower(testUser), ""); len(open) != 0 {
		t.Errorf("placed %v", open)
	}
}
