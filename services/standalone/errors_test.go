package standalone

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// errorCase is one request that must fail with one code.
type errorCase struct {
	name    string
	method  string // POST when empty
	path    string // /v1 when empty
	key     string
	body    string
	chunked bool // send without Content-Length
	code    contract.Code
	msg     string // substring of the message
	reason  contract.Reason
	// limited: the request got past step 4, so it carries X-RateLimit-*.
	limited bool
}

// TestErrorTable produces every error code of SPEC §7 and DESIGN §4 through
// the real HTTP server and checks status, code, message and the headers
// every answer carries: X-Request-Id (a UUID) and X-Request-Duration-Ms
// always, X-RateLimit-* from step 4 on, Retry-After only on 429 and 503
// SERVICE_UNAVAILABLE, and Allow: POST only on 405.
func TestErrorTable(t *testing.T) {
	g := startGateway(t, func(c *Config) {
		c.Edge.RequestTimeout = time.Second
		// A small free-tier quota reaches RATE_LIMITED in a few requests.
		c.Edge.TierLimits[contract.TierFree] = contract.TierLimits{PerMinute: 3, PerDay: 1000}
		c.Exchanges = []contract.Exchange{contract.Paper, contract.Binance, contract.Hyperliquid} // no Bybit connector
	})
	ctx := context.Background()
	boot := g.Bootstrap()
	acct, paperCred, builderKey := boot.AccountID, boot.CredentialID, boot.APIKey

	binanceMain := g.newCredential(acct, contract.Binance, contract.Mainnet, `{"apiKey":"made-up-key","apiSecret":"made-up-secret"}`)
	bybitTest := g.newCredential(acct, contract.Bybit, contract.Testnet, `{"apiKey":"made-up-key","apiSecret":"made-up-secret"}`)
	okxTest := g.newCredential(acct, contract.OKX, contract.Testnet, `{"apiKey":"k","apiSecret":"s","passphrase":"p"}`)
	paradexTest := g.newCredential(acct, contract.Paradex, contract.Testnet, `{"accountAddress":"0xabc","starkPrivateKey":"0x123"}`)
	deleted := g.newCredential(acct, contract.Paper, contract.Testnet, `{}`)
	if err := g.Keys().DeleteCredential(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	otherAcct := g.newAccount(contract.TierPro)
	otherCred := g.newCredential(otherAcct, contract.Paper, contract.Testnet, `{}`)

	freeAcct := g.newAccount(contract.TierFree)
	freeCred := g.newCredential(freeAcct, contract.Paper, contract.Testnet, `{}`)
	freeKey := g.newKey(freeAcct, keys.KeyRequest{Env: contract.KeyEnvTest})
	limitedKey := g.newKey(freeAcct, keys.KeyRequest{Env: contract.KeyEnvTest})
	liveKey := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvLive})
	opScoped := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest, AllowedOperations: []string{"getMarkPrice"}})
	credScoped := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest, AllowedCredentials: []string{paperCred}})
	exchScoped := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest, AllowedExchanges: []contract.Exchange{contract.Bybit}})
	revoked := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest})
	if _, err := g.Keys().RevokeKey(ctx, keyID(t, g, revoked)); err != nil {
		t.Fatal(err)
	}

	// Stand-ins for connectors that misbehave: okx's never answers (the
	// deadline passes), paradex's answers with a fault that is not a
	// contract error and must not leak.
	nc, err := g.Connect("misbehaving-connectors")
	if err != nil {
		t.Fatal(err)
	}
	subjects := contract.NewSubjects("")
	for _, op := range contract.Operations {
		if _, err := nc.Subscribe(subjects.Operation(contract.OKX, op), func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Subscribe(subjects.Operation(contract.Paradex, op), func(m *nats.Msg) {
			reply := nats.NewMsg(m.Reply)
			reply.Header.Set(micro.ErrorCodeHeader, "500")
			reply.Header.Set(micro.ErrorHeader, "boom")
			reply.Data = []byte("panic: /srv/perpgate/internal.go:42 dial tcp 10.0.0.7:5432")
			_ = m.RespondMsg(reply)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	mark := g.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})
	crossing := dec(t, mark["markPrice"]).Mul(decimal.RequireFromString("1.1")).Round(0).String()
	unknownKey := "mt_test_" + strings.Repeat("A", 43)
	op := func(name, cred string, extra string) string {
		b := `{"operation":"` + name + `","credentialId":"` + cred + `"`
		if extra != "" {
			b += "," + extra
		}
		return b + "}"
	}
	mp := func(cred string) string { return op("getMarkPrice", cred, `"market":"BTC"`) }
	nested := `{"operation":"getMarkPrice","credentialId":"` + paperCred + `","market":` +
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}"
	batch := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `{"market":"BTC","side":"BUY","size":"0.001","price":"1000"}`
		}
		return op("placeBatchOrder", paperCred, `"orders":[`+strings.Join(items, ",")+`]`)
	}

	cases := []errorCase{
		{name: "no key", body: mp(paperCred), code: contract.CodeMissingAPIKey, msg: "Authorization: Bearer <key>"},
		{name: "key without prefix", key: "sk_live_abcdef", body: mp(paperCred), code: contract.CodeInvalidKeyFormat, msg: "mt_live_"},
		{name: "unknown key", key: unknownKey, body: mp(paperCred), code: contract.CodeInvalidAPIKey},
		{name: "short key", key: "mt_live_abc", body: mp(paperCred), code: contract.CodeInvalidAPIKey},
		{name: "revoked key", key: revoked, body: mp(paperCred), code: contract.CodeKeyRevoked, msg: revoked[:12]},
		{name: "GET", method: http.MethodGet, key: builderKey, code: contract.CodeMethodNotAllowed, msg: "POST"},
		{name: "PUT", method: http.MethodPut, key: builderKey, body: mp(paperCred), code: contract.CodeMethodNotAllowed},
		{name: "1 MiB body", key: builderKey, body: `{"operation":"getMarkPrice","pad":"` + strings.Repeat("x", 1<<20) + `"}`,
			code: contract.CodePayloadTooLarge, msg: "65536"},
		{name: "1 MiB chunked body", key: builderKey, chunked: true, body: `{"pad":"` + strings.Repeat("x", 1<<20) + `"}`,
			code: contract.CodePayloadTooLarge},
		{name: "unknown path", path: "/v2", key: builderKey, body: mp(paperCred), code: contract.CodeNotFound, msg: "POST /v1"},
		{name: "not JSON", key: builderKey, body: `{"operation":`, code: contract.CodeInvalidJSON, limited: true},
		{name: "JSON array", key: builderKey, body: `[{"operation":"getMarkPrice"}]`, code: contract.CodeInvalidJSON, limited: true},
		{name: "deeply nested", key: builderKey, body: nested, code: contract.CodeInvalidJSON, limited: true},
		{name: "no operation", key: builderKey, body: `{"credentialId":"` + paperCred + `"}`, code: contract.CodeMissingOperation, limited: true},
		{name: "unknown operation", key: builderKey, body: op("getEverything", paperCred, ""), code: contract.CodeUnknownOperation, msg: "getEverything", limited: true},
		{name: "misspelt operation", key: builderKey, body: op("getMarkprice", paperCred, ""), code: contract.CodeUnknownOperation, msg: `did you mean "getMarkPrice"?`, limited: true},
		{name: "free key places", key: freeKey, body: op("placeLimitOrder", freeCred, `"market":"BTC","side":"BUY","size":"0.01","price":"1000"`),
			code: contract.CodeTierInsufficient, msg: "builder", limited: true},
		{name: "operation outside scope", key: opScoped, body: op("getBalance", paperCred, ""), code: contract.CodeOperationNotAllowed, msg: "getBalance", limited: true},
		{name: "credential outside scope", key: credScoped, body: mp(otherCredOf(t, g, acct)), code: contract.CodeCredentialNotAllowed, limited: true},
		{name: "exchange outside scope", key: exchScoped, body: mp(paperCred), code: contract.CodeExchangeNotAllowed, msg: "paper", limited: true},
		{name: "live key, testnet credential", key: liveKey, body: mp(paperCred), code: contract.CodeEnvironmentMismatch, msg: "mt_test_", limited: true},
		{name: "test key, mainnet credential", key: builderKey, body: mp(binanceMain), code: contract.CodeEnvironmentMismatch, msg: "mt_live_", limited: true},
		{name: "no credentialId", key: builderKey, body: `{"operation":"getMarkPrice","market":"BTC"}`, code: contract.CodeInvalidRequest, msg: "credentialId", limited: true},
		{name: "credentialId not a UUID", key: builderKey, body: mp("cred-1"), code: contract.CodeInvalidRequest, msg: "UUID", limited: true},
		{name: "unknown credential", key: builderKey, body: mp(uuid.NewString()), code: contract.CodeCredentialNotFound, limited: true},
		{name: "deleted credential", key: builderKey, body: mp(deleted), code: contract.CodeCredentialNotFound, limited: true},
		{name: "another account's credential", key: builderKey, body: mp(otherCred), code: contract.CodeCredentialNotFound, limited: true},
		{name: "unknown field", key: builderKey, body: op("getMarkPrice", paperCred, `"market":"BTC","price":"1"`), code: contract.CodeInvalidRequest, msg: "price", limited: true},
		{name: "missing market", key: builderKey, body: op("getMarkPrice", paperCred, ""), code: contract.CodeInvalidRequest, msg: "market", limited: true},
		{name: "market of wrong type", key: builderKey, body: op("getMarkPrice", paperCred, `"market":7`), code: contract.CodeInvalidRequest, msg: "market", limited: true},
		{name: "bad side", key: builderKey, body: op("placeLimitOrder", paperCred, `"market":"BTC","side":"LONG","size":"1","price":"1"`), code: contract.CodeInvalidRequest, msg: "side", limited: true},
		{name: "negative size", key: builderKey, body: op("placeLimitOrder", paperCred, `"market":"BTC","side":"BUY","size":"-1","price":"1"`), code: contract.CodeInvalidRequest, msg: "size", limited: true},
		{name: "batch of 11", key: builderKey, body: batch(11), code: contract.CodeInvalidRequest, msg: "orders", limited: true},
		{name: "candles limit 501", key: builderKey, body: op("getCandles", paperCred, `"market":"BTC","limit":501`), code: contract.CodeInvalidRequest, msg: "limit", limited: true},
		{name: "huge number", key: builderKey, body: op("getOrderbook", paperCred, `"market":"BTC","depth":1e999999`), code: contract.CodeInvalidRequest, msg: "depth", limited: true},
		{name: "huge integer", key: builderKey, body: op("getOrderbook", paperCred, `"market":"BTC","depth":123456789012345678901234567890`), code: contract.CodeInvalidRequest, msg: "depth", limited: true},
		{name: "unknown market", key: builderKey, body: op("getMarkPrice", paperCred, `"market":"NOSUCHCOIN"`), code: contract.CodeUnknownMarket, msg: "NOSUCHCOIN", limited: true},
		{name: "post-only that would cross", key: builderKey,
			body: op("placeLimitOrder", paperCred, `"market":"BTC","side":"BUY","size":"0.01","price":"`+crossing+`","postOnly":true`),
			code: contract.CodeExchangeError, reason: contract.ReasonPostOnlyRejected, limited: true},
		{name: "no connector running", key: builderKey, body: mp(bybitTest), code: contract.CodeExchangeUnavailable, msg: "bybit", limited: true},
		{name: "connector does not answer", key: builderKey, body: mp(okxTest), code: contract.CodeExchangeTimeout, msg: "okx", limited: true},
		{name: "placement times out", key: builderKey,
			body: op("placeLimitOrder", okxTest, `"market":"BTC","side":"BUY","size":"0.01","price":"1000","clientOrderId":"timeout-1"`),
			code: contract.CodeExchangeTimeout, msg: "clientOrderId timeout-1", limited: true},
		{name: "connector fault", key: builderKey, body: mp(paradexTest), code: contract.CodeInternal, msg: contract.InternalMessage, limited: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.send(tc)
			checkError(t, r, tc)
		})
	}

	t.Run("expired key", func(t *testing.T) {
		exp := time.Now().Add(time.Second)
		expiring := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest, ExpiresAt: &exp})
		tc := errorCase{key: expiring, body: mp(paperCred), code: contract.CodeKeyExpired, msg: "expired"}
		// The key works until its expiry, then is refused.
		if r := g.send(tc); r.status != http.StatusOK {
			t.Fatalf("before expiry: %d %s", r.status, r.raw)
		}
		checkFor(t, 5*time.Second, 50*time.Millisecond, func() error {
			if r := g.send(tc); r.code() != string(contract.CodeKeyExpired) {
				return fmt.Errorf("still %d %s", r.status, r.raw)
			}
			return nil
		})
		checkError(t, g.send(tc), tc)
	})

	t.Run("rate limited", func(t *testing.T) {
		tc := errorCase{key: limitedKey, body: mp(freeCred), code: contract.CodeRateLimited, msg: "retry in", limited: true}
		var r response
		for i := 0; i < 4; i++ {
			if r = g.send(tc); r.status == http.StatusTooManyRequests {
				break
			}
		}
		checkError(t, r, tc)
	})

	t.Run("scoped keys do what they allow", func(t *testing.T) {
		for name, key := range map[string]string{"operation": opScoped, "credential": credScoped} {
			if r := g.send(errorCase{key: key, body: mp(paperCred)}); r.status != http.StatusOK {
				t.Errorf("%s-scoped key: %d %s", name, r.status, r.raw)
			}
		}
		// An exchange-scoped key reaches its exchange (here: no connector).
		if r := g.send(errorCase{key: exchScoped, body: mp(bybitTest)}); r.code() != string(contract.CodeExchangeUnavailable) {
			t.Errorf("exchange-scoped key on its exchange: %d %s", r.status, r.raw)
		}
	})

	if logs := g.logs.String(); strings.Contains(logs, "made-up-secret") {
		t.Error("a credential secret reached the logs")
	}
}

// TestLimiterDown: Redis unreachable is 503 SERVICE_UNAVAILABLE with
// Retry-After and a message naming the rate limiter's store, not its
// address; the cause is logged with the request id.
func TestLimiterDown(t *testing.T) {
	g := startGateway(t, func(c *Config) { c.RedisURL = "redis://127.0.0.1:1/0" })
	tc := errorCase{key: g.Bootstrap().APIKey, code: contract.CodeServiceUnavailable, msg: "rate limiter's store (Redis)",
		body: `{"operation":"getMarkPrice","credentialId":"` + g.Bootstrap().CredentialID + `","market":"BTC"}`}
	r := g.send(tc)
	checkError(t, r, tc)
	if r.header.Get("Retry-After") == "" {
		t.Error("SERVICE_UNAVAILABLE without Retry-After")
	}
	if strings.Contains(string(r.raw), "127.0.0.1") {
		t.Errorf("the response leaks the address: %s", r.raw)
	}
	if !strings.Contains(g.logs.String(), `"request_id":"`+r.header.Get("X-Request-Id")+`"`) ||
		!strings.Contains(g.logs.String(), "dependency unavailable") {
		t.Error("the outage is not logged with the request id the client saw")
	}
}

// TestKeyChangesReachRunningEdge: a key that an edge has already cached is
// refused within a second of its revocation, and a deleted credential
// within a second of its deletion.
func TestKeyChangesReachRunningEdge(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	acct := g.Bootstrap().AccountID
	key := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest})
	cred := g.newCredential(acct, contract.Paper, contract.Testnet, `{}`)
	body := `{"operation":"getMarkPrice","credentialId":"` + cred + `","market":"BTC"}`
	for i := 0; i < 3; i++ { // warm the edge's caches
		if r := g.post(key, []byte(body)); r.status != http.StatusOK {
			t.Fatalf("before revocation: %d %s", r.status, r.raw)
		}
	}
	if _, err := g.Keys().RevokeKey(ctx, keyID(t, g, key)); err != nil {
		t.Fatal(err)
	}
	revokedAt := time.Now()
	checkFor(t, time.Second, 10*time.Millisecond, func() error {
		if r := g.post(key, []byte(body)); r.code() != string(contract.CodeKeyRevoked) {
			return fmt.Errorf("still %d %s", r.status, r.raw)
		}
		return nil
	})
	t.Logf("revocation refused after %s", time.Since(revokedAt).Round(time.Millisecond))

	other := g.Bootstrap().APIKey
	if r := g.post(other, []byte(body)); r.status != http.StatusOK {
		t.Fatalf("before deletion: %d %s", r.status, r.raw)
	}
	if err := g.Keys().DeleteCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	checkFor(t, time.Second, 10*time.Millisecond, func() error {
		if r := g.post(other, []byte(body)); r.code() != string(contract.CodeCredentialNotFound) {
			return fmt.Errorf("still %d %s", r.status, r.raw)
		}
		return nil
	})
}

// send performs one errorCase request.
func (g *testGateway) send(tc errorCase) response {
	g.t.Helper()
	method, path := tc.method, tc.path
	if method == "" {
		method = http.MethodPost
	}
	if path == "" {
		path = "/v1"
	}
	var body io.Reader = strings.NewReader(tc.body)
	if tc.chunked {
		body = io.MultiReader(bytes.NewReader([]byte(tc.body))) // unknown length: chunked
	}
	req, err := http.NewRequest(method, g.URL()+path, body)
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if tc.key != "" {
		req.Header.Set("X-API-Key", tc.key)
	}
	return g.do(req)
}

// checkError asserts the envelope, status and headers of a failed request.
func checkError(t *testing.T, r response, tc errorCase) {
	t.Helper()
	if r.status != tc.code.Status() || r.code() != string(tc.code) {
		t.Fatalf("got %d %s, want %d %s: %s", r.status, r.code(), tc.code.Status(), tc.code, r.raw)
	}
	msg, _ := r.body["error"].(string)
	if r.body["success"] != false || msg == "" || !strings.Contains(msg, tc.msg) {
		t.Errorf("envelope %s: want success:false and a message containing %q", r.raw, tc.msg)
	}
	if bytes.Contains(r.raw, []byte(`\u003c`)) || bytes.Contains(r.raw, []byte(`\u003e`)) {
		t.Errorf("envelope %s escapes < or > for HTML; clients read it as JSON", r.raw)
	}
	if tc.reason != "" && r.body["reason"] != string(tc.reason) {
		t.Errorf("reason = %v, want %s", r.body["reason"], tc.reason)
	}
	checkStamp(t, r)
	limitHeaders := []string{"X-RateLimit-Limit-Minute", "X-RateLimit-Remaining-Minute", "X-RateLimit-Limit-Day", "X-RateLimit-Remaining-Day"}
	ietf := regexp.MustCompile(`^"minute";r=\d+;t=\d+, "day";r=\d+;t=\d+$`)
	if rl := r.header.Get("RateLimit"); tc.limited != (rl != "") || rl != "" && !ietf.MatchString(rl) {
		t.Errorf("RateLimit = %q (limited %v)", rl, tc.limited)
	}
	if rl := r.header.Get("RateLimit-Policy"); tc.limited != (rl != "") {
		t.Errorf("RateLimit-Policy = %q (limited %v)", rl, tc.limited)
	}
	challenge := r.header.Get("WWW-Authenticate")
	if (r.status == http.StatusUnauthorized) != strings.HasPrefix(challenge, `Bearer realm="perpgate"`) {
		t.Errorf("WWW-Authenticate = %q on %d", challenge, r.status)
	}
	if r.status == http.StatusUnauthorized && strings.Contains(challenge, `error="invalid_token"`) == (tc.code == contract.CodeMissingAPIKey) {
		t.Errorf("WWW-Authenticate = %q on %s: invalid_token is for a key that was sent", challenge, tc.code)
	}
	for _, h := range limitHeaders {
		v := r.header.Get(h)
		if tc.limited {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				t.Errorf("%s = %q, want a count", h, v)
			}
		} else if v != "" {
			t.Errorf("%s = %q on a request refused before the rate limit", h, v)
		}
	}
	retries := tc.code == contract.CodeRateLimited || tc.code == contract.CodeServiceUnavailable
	if ra := r.header.Get("Retry-After"); retries != (ra != "") {
		t.Errorf("Retry-After = %q on %s", ra, tc.code)
	} else if ra != "" {
		if n, err := strconv.Atoi(ra); err != nil || n < 1 || n > 60 {
			t.Errorf("Retry-After = %q, want 1..60 seconds", ra)
		}
	}
	if allow := r.header.Get("Allow"); (tc.code == contract.CodeMethodNotAllowed) != (allow == http.MethodPost) {
		t.Errorf("Allow = %q on %s", allow, tc.code)
	}
}

// checkStamp asserts the headers every response carries.
func checkStamp(t *testing.T, r response) {
	t.Helper()
	if _, err := uuid.Parse(r.header.Get("X-Request-Id")); err != nil {
		t.Errorf("X-Request-Id = %q, want a UUID", r.header.Get("X-Request-Id"))
	}
	if ms, err := strconv.ParseFloat(r.header.Get("X-Request-Duration-Ms"), 64); err != nil || ms < 0 {
		t.Errorf("X-Request-Duration-Ms = %q", r.header.Get("X-Request-Duration-Ms"))
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q", ct)
	}
}

// otherCredOf adds a second paper credential to acct, outside a key scoped
// to the bootstrap credential.
func otherCredOf(t *testing.T, g *testGateway, acct string) string {
	t.Helper()
	return g.newCredential(acct, contract.Paper, contract.Testnet, `{}`)
}
