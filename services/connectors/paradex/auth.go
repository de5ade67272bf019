package paradex

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/big"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
)

// A Paradex JWT lives five minutes and cannot be extended (docs, "API
// authentication"); a token is replaced once less than refreshBefore of it
// is left, so no request goes out with one about to expire.
const (
	tokenLifetime = 5 * time.Minute
	refreshBefore = time.Minute
)

// Token is a JWT and when it expires on our clock. It prints as a mask.
type Token struct {
	JWT     string
	Expires time.Time
}

// String masks the JWT.
func (t Token) String() string { return "Token(***)" }

// LogValue masks the JWT in structured logs.
func (t Token) LogValue() slog.Value { return slog.StringValue("***") }

// TokenStore keeps JWTs by credential. The connector's default is
// per-process (MemoryTokens); a store shared by replicas lets them reuse
// one token per credential.
type TokenStore interface {
	Get(key string) (Token, bool)
	Put(key string, t Token)
	Delete(key string)
}

// MemoryTokens is a per-process TokenStore.
type MemoryTokens = venuekit.Store[Token]

// NewMemoryTokens returns an empty store.
func NewMemoryTokens() *MemoryTokens { return venuekit.NewStore[Token]() }

// account is a decoded, validated credential.
type account struct {
	credID  string
	address *big.Int
	key     *stark.Key
}

// tokenKey names a credential's token at a host: the credential, the
// address and the public key (a rotated key gets a new token), never the
// private key.
func (a *account) tokenKey(base string) string {
	return base + " " + a.credID + " " + stark.HexFelt(a.address) + " " + stark.HexFelt(a.key.PublicKey())
}

// token returns a JWT for acct, from the store while it has more than
// refreshBefore left, else from POST /auth. refused is a token Paradex
// answered 401 to: it is replaced unless another caller already did.
// Concurrent callers of one credential share one auth call.
func (c *client) token(ctx context.Context, h *host, acct *account, refused string) (string, error) {
	key := acct.tokenKey(h.base)
	defer c.flights.Lock(key)()
	if t, ok := c.tokens.Get(key); ok && t.JWT != refused && c.now().Before(t.Expires.Add(-refreshBefore)) {
		return t.JWT, nil
	}
	c.tokens.Delete(key)
	t, err := c.authenticate(ctx, h, acct)
	if err != nil {
		return "", err
	}
	c.tokens.Put(key, t)
	return t.JWT, nil
}

// authenticate signs Request{POST,/v1/auth,"",ts,exp} (seconds) and posts
// it: a main key to /auth, a subkey to /auth/{public key} (auth page;
// paradex-py posts there for both). The path signed is /v1/auth either way.
func (c *client) authenticate(ctx context.Context, h *host, acct *account) (Token, error) {
	chain, err := c.chainID(ctx, h)
	if err != nil {
		return Token{}, err
	}
	if err := c.syncIfStale(ctx, h); err != nil {
		return Token{}, err
	}
	ts := h.clock.Now().Unix()
	exp := ts + int64(c.authExpiry/time.Second)
	r, s, err := acct.key.Sign(stark.AuthHash(chain, acct.address, ts, exp))
	if err != nil {
		return Token{}, err
	}
	hdr := http.Header{}
	hdr.Set("PARADEX-STARKNET-ACCOUNT", stark.HexFelt(acct.address))
	hdr.Set("PARADEX-STARKNET-SIGNATURE", stark.FormatSignature(r, s))
	hdr.Set("PARADEX-TIMESTAMP", strconv.FormatInt(ts, 10))
	hdr.Set("PARADEX-SIGNATURE-EXPIRATION", strconv.FormatInt(exp, 10))
	var out authResp
	req := request{method: http.MethodPost, path: c.authPath(h, acct), header: hdr, limit: "auth"}
	if _, err := c.send(ctx, h, req, "", &out); err != nil {
		return Token{}, err
	}
	if out.JWTToken == "" {
		return Token{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "Paradex answered POST /auth without jwt_token")
	}
	return Token{JWT: out.JWTToken, Expires: c.jwtExpiry(h, out.JWTToken)}, nil
}

// authPath is /auth when acct's address is the one Paradex derives for
// its key (a main key), else /auth/{public key} (a subkey). Without the
// class hashes it is the latter, which Paradex takes for both.
func (c *client) authPath(h *host, acct *account) string {
	h.mu.Lock()
	ah, ph := h.accountHash, h.proxyHash
	h.mu.Unlock()
	pub := acct.key.PublicKey()
	if ah != nil && ph != nil && stark.MainAccountAddress(pub, ah, ph).Cmp(acct.address) == 0 {
		return "/auth"
	}
	return "/auth/" + stark.HexFelt(pub)
}

// jwtExpiry reads the token's exp claim (server time, seconds) onto our
// clock; without one it assumes the documented five minutes.
func (c *client) jwtExpiry(h *host, jwt string) time.Time {
	fallback := c.now().Add(tokenLifetime)
	exp, ok := venuekit.JWTExpiry(jwt)
	if exp = exp.Add(-h.clock.Offset()); !ok || exp.After(fallback) {
		return fallback
	}
	return exp
}

// chainID is the host's Starknet chain id (GET /system/config), read once.
func (c *client) chainID(ctx context.Context, h *host) (string, error) {
	h.mu.Lock()
	id := h.chain
	h.mu.Unlock()
	if id != "" {
		return id, nil
	}
	var cfg systemConfig
	if _, err := c.send(ctx, h, request{method: http.MethodGet, path: "/system/config"}, "", &cfg); err != nil {
		return "", err
	}
	if cfg.StarknetChainID == "" || len(cfg.StarknetChainID) > 31 {
		return "", contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "Paradex answered /system/config without a usable starknet_chain_id")
	}
	ah, err1 := stark.ParseFelt(cfg.ParaclearAccountHash)
	ph, err2 := stark.ParseFelt(cfg.ParaclearAccountProxyHash)
	h.mu.Lock()
	h.chain = cfg.StarknetChainID
	if err1 == nil && err2 == nil {
		h.accountHash, h.proxyHash = ah, ph
	}
	h.mu.Unlock()
	return cfg.StarknetChainID, nil
}

// syncIfStale measures Paradex's clock (GET /system/time) when the last
// measurement is old: auth and order signatures carry its time.
func (c *client) syncIfStale(ctx context.Context, h *host) error {
	return venuekit.Synced(ctx, h.clock, func(ctx context.Context) (time.Time, error) {
		var st struct {
			ServerTime json.Number `json:"server_time"`
		}
		if _, err := c.send(ctx, h, request{method: http.MethodGet, path: "/system/time"}, "", &st); err != nil {
			return time.Time{}, err
		}
		ms, err := st.ServerTime.Int64()
		if err != nil || ms <= 0 {
			return time.Time{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "Paradex answered /system/time without server_time")
		}
		return time.UnixMilli(ms), nil
	})
}
