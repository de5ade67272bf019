// Package sim simulates Paradex's REST v1 API for perpetuals on the paper
// engine: the real paths under /v1, JSON answers in Paradex's shapes, the
// ApiError body {"error","message","data"} with Paradex's codes, POST
// /v1/auth with the Stark signature of the SNIP-12 Request message checked
// against the account's public key, JWTs that expire (five minutes, as on
// Paradex) and are checked on every private call, orders whose Stark
// signature is verified, and asynchronous acceptance: POST /v1/orders
// answers 201 NEW and the risk checks run before the next request, so a
// refused order shows as CLOSED with a cancel_reason when read back.
// Requests count against per-minute limits by class with the
// x-ratelimit-* headers, and 429 beyond them.
// The connector's tests run against it; cmd/paradex-sim serves it as a
// local stand-in for Paradex.
//
// Each handler names the Paradex API reference page its answer follows
// (https://docs.paradex.trade/api/prod/...). The websocket is served at /v1: public
// markets_summary and order_book (stream.go), and the private channels after auth with
// a JWT (account.go). Left out: isolated margin, price bands and the open-order cap.
package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
	"github.com/shopspring/decimal"
)

// Config configures a Server. Zero fields take the defaults noted.
type Config struct {
	Now     func() time.Time   // Paradex's clock; default time.Now
	Seed    int64              // price walk seed
	Markets []paper.MarketSpec // default DefaultMarkets()
	// Accounts maps account address (0x hex) to the Stark public key (0x
	// hex) that signs for it.
	Accounts map[string]string
	ChainID  string        // starknet_chain_id; default the mainnet one
	TokenTTL time.Duration // JWT lifetime; default 5 minutes
	// FundingPeriodHours is funding_period_hours of every market; default 8.
	FundingPeriodHours int
	// PageCap caps every history page the sim answers (funding payments),
	// so tests can make the connector page; 0: the documented limits.
	PageCap int
	// Quota is requests per minute by class: "public" (per IP), "auth"
	// (per IP), "read" (private GETs per account), "orders" (private
	// POST/DELETE per account). Defaults from the rate-limits page: 1500,
	// 600, 600 and 17250.
	Quota map[string]int
	// StreamPingEvery is how often the websocket pings (protocol level);
	// default 55 s, as Paradex.
	StreamPingEvery time.Duration
	// NoFeeConfig lists markets answered without fee_config, and
	// NoPositionLeverage leaves leverage out of positions, as recorded
	// live (issue 28).
	NoFeeConfig        map[string]bool
	NoPositionLeverage bool
}

// DefaultMarkets are BTC-USD-PERP, ETH-USD-PERP and the multiplier
// listings kPEPE-USD-PERP and mSATS-USD-PERP, with Paradex-like rules.
func DefaultMarkets() []paper.MarketSpec {
	d := decimal.RequireFromString
	return []paper.MarketSpec{
		{Symbol: "BTC-USD-PERP", Base: "BTC", Quote: "USD", StartPrice: d("95000"), TickSize: d("0.1"), LotSize: d("0.00001"), MinNotional: d("10"), MaxLeverage: 50},
		{Symbol: "ETH-USD-PERP", Base: "ETH", Quote: "USD", StartPrice: d("3500"), TickSize: d("0.01"), LotSize: d("0.001"), MinNotional: d("10"), MaxLeverage: 50},
		{Symbol: "kPEPE-USD-PERP", Base: "kPEPE", Quote: "USD", StartPrice: d("0.0125"), TickSize: d("0.000001"), LotSize: d("1"), MinNotional: d("10"), MaxLeverage: 10},
		{Symbol: "mSATS-USD-PERP", Base: "mSATS", Quote: "USD", StartPrice: d("0.095"), TickSize: d("0.00001"), LotSize: d("1"), MinNotional: d("10"), MaxLeverage: 10},
	}
}

// Failure is an answer the next matching request gets instead of being
// processed (FailNext): an HTTP status with Paradex's error code.
type Failure struct {
	Status  int
	Code    string // ApiError.error
	Message string
	// After: the request is carried out first and only its answer is
	// replaced, as when Paradex acted but the answer was lost.
	After bool
}

// Server is the simulated Paradex. It is an http.Handler.
type Server struct {
	*simkit.Book[*big.Int, Failure] // accounts by address → public key; Hits, FailNext

	cfg    Config
	eng    *paper.Engine
	mux    *http.ServeMux
	secret []byte // signs the simulator's JWTs

	mu       sync.Mutex
	orders   map[string]*order // Paradex id → order
	byPaper  map[string]string // account + paper id → Paradex id
	intake   []*order          // accepted (NEW), risk checks pending
	hold     int               // intake passes still to skip (HoldIntake)
	seq      uint64
	tokens   int
	revoked  int // tokens numbered up to this are refused (RevokeTokens)
	leverage map[string]int
	calls    map[string][]time.Time // class + account → request times in the window

	hub  hub  // websocket (stream.go)
	feed feed // its private channels (account.go)
}

// engineMarkets are the markets without their minimum notional: Paradex
// values an order at the mark price, not at its limit price as the paper
// engine would, so the simulator judges it itself (belowMin).
func engineMarkets(specs []paper.MarketSpec) []paper.MarketSpec {
	out := slices.Clone(specs)
	for i := range out {
		out[i].MinNotional = decimal.Zero
	}
	return out
}

// New returns a simulator with cfg's defaults filled in; it panics on an
// invalid address or key in cfg.Accounts (AddAccount returns the error).
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Markets) == 0 {
		cfg.Markets = DefaultMarkets()
	}
	if cfg.ChainID == "" {
		cfg.ChainID = stark.ChainMainnet
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = 5 * time.Minute
	}
	if cfg.StreamPingEvery <= 0 {
		cfg.StreamPingEvery = 55 * time.Second
	}
	if cfg.FundingPeriodHours <= 0 {
		cfg.FundingPeriodHours = 8
	}
	s := &Server{
		Book:     simkit.New[*big.Int, Failure](nil),
		cfg:      cfg,
		eng:      paper.New(paper.Config{Seed: cfg.Seed, Now: cfg.Now, Markets: engineMarkets(cfg.Markets), MaxLeverage: 50, DefaultLeverage: 10, TakerFeeBps: decimal.RequireFromString("3"), MakerFeeBps: decimal.RequireFromString("0.5")}),
		secret:   []byte(fmt.Sprintf("paradex-sim-%d", time.Now().UnixNano())),
		orders:   map[string]*order{},
		byPaper:  map[string]string{},
		leverage: map[string]int{},
		calls:    map[string][]time.Time{},
		hub:      hub{seq: map[string]int64{}},
		feed:     feed{wake: make(chan struct{}, 1)},
	}
	s.eng.OnEvent(s.feed.engineEvent)
	go s.dispatch()
	for addr, pub := range cfg.Accounts {
		if err := s.AddAccount(addr, pub); err != nil {
			panic(err)
		}
	}
	s.mux = s.routes()
	return s
}

// AddAccount registers an account address and the Stark public key that
// signs for it (a main key or a subkey).
func (s *Server) AddAccount(address, publicKey string) error {
	a, err := stark.ParseFelt(address)
	if err != nil {
		return fmt.Errorf("account %s: %w", address, err)
	}
	p, err := stark.ParseFelt(publicKey)
	if err != nil {
		return fmt.Errorf("public key of %s: %w", address, err)
	}
	s.AddKey(stark.HexFelt(a), p)
	return nil
}

// Engine is the paper engine behind the simulator (tests move prices).
func (s *Server) Engine() *paper.Engine { return s.eng }

// TokensIssued counts the JWTs /v1/auth handed out.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens
}

// RevokeTokens makes every JWT issued so far fail with 401, as an expired
// or revoked token does.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	s.revoked = s.tokens
	s.mu.Unlock()
}

// HoldIntake keeps accepted orders NEW for the next n requests, as while
// Paradex's risk checks are slow.
func (s *Server) HoldIntake(n int) {
	s.mu.Lock()
	s.hold = n
	s.mu.Unlock()
}

// quotaWindow is the window of every limit (per minute on the rate-limits
// page; Paradex refills continuously, the simulator counts a rolling minute).
const quotaWindow = time.Minute

func (s *Server) quota(class string) int {
	if n, ok := s.cfg.Quota[class]; ok && n > 0 {
		return n
	}
	return map[string]int{"public": 1500, "auth": 600, "read": 600, "orders": 17250}[class]
}

// charge counts a request of class for who and sets the x-ratelimit-*
// headers (paradex-py reads them); over the limit the answer is 429.
func (s *Server) charge(rw http.ResponseWriter, class, who string, now time.Time) *apiErr {
	limit := s.quota(class)
	s.mu.Lock()
	defer s.mu.Unlock()
	id := class + " " + who
	var kept []time.Time
	for _, t := range s.calls[id] {
		if now.Sub(t) < quotaWindow {
			kept = append(kept, t)
		}
	}
	reset := now.Add(quotaWindow)
	if len(kept) > 0 {
		reset = kept[0].Add(quotaWindow)
	}
	h := rw.Header()
	h.Set("x-ratelimit-limit", fmt.Sprint(limit))
	h.Set("x-ratelimit-window", "60s")
	h.Set("x-ratelimit-reset", fmt.Sprint(reset.UnixMilli()))
	if len(kept) >= limit {
		s.calls[id] = kept
		h.Set("x-ratelimit-remaining", "0")
		return errf(http.StatusTooManyRequests, "TOO_MANY_REQUESTS", "rate limit exceeded")
	}
	kept = append(kept, now)
	s.calls[id] = kept
	h.Set("x-ratelimit-remaining", fmt.Sprint(limit-len(kept)))
	return nil
}

// apiErr is Paradex's ApiError with its HTTP status.
type apiErr struct {
	status int
	code   string
	msg    string
}

func errf(status int, code, format string, args ...any) *apiErr {
	return &apiErr{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

func write(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(rw).Encode(v)
	}
}

func writeErr(rw http.ResponseWriter, e *apiErr) {
	write(rw, e.status, map[string]any{"error": e.code, "message": e.msg, "data": nil})
}

// jwt issues an HS256 token for account (Paradex signs ES384; only the
// simulator checks its own tokens, so the algorithm does not matter).
func (s *Server) jwt(account string, now time.Time) string {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	s.mu.Lock()
	s.tokens++
	n := s.tokens
	s.mu.Unlock()
	claims, _ := json.Marshal(map[string]any{"sub": account, "iat": now.Unix(), "exp": now.Add(s.cfg.TokenTTL).Unix(),
		"iss": "paradex-sim", "n": n})
	body := head + "." + enc.EncodeToString(claims)
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(body))
	return body + "." + enc.EncodeToString(m.Sum(nil))
}

// bearer checks Authorization: Bearer <jwt> and returns the account.
func (s *Server) bearer(r *http.Request, now time.Time) (string, *apiErr) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", errf(http.StatusUnauthorized, "INVALID_TOKEN", "missing or malformed jwt")
	}
	return s.checkJWT(tok, now)
}

// checkJWT checks one of the simulator's tokens and returns the account.
func (s *Server) checkJWT(tok string, now time.Time) (string, *apiErr) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", errf(http.StatusUnauthorized, "INVALID_TOKEN", "missing or malformed jwt")
	}
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, m.Sum(nil)) {
		return "", errf(http.StatusUnauthorized, "INVALID_TOKEN", "invalid or expired jwt")
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Sub string `json:"sub"`
		Exp int64  `json:"exp"`
		N   int    `json:"n"`
	}
	if json.Unmarshal(raw, &c) != nil || now.Unix() >= c.Exp {
		return "", errf(http.StatusUnauthorized, "INVALID_TOKEN", "invalid or expired jwt")
	}
	s.mu.Lock()
	revoked := c.N <= s.revoked
	s.mu.Unlock()
	if revoked {
		return "", errf(http.StatusUnauthorized, "INVALID_TOKEN", "invalid or expired jwt")
	}
	return c.Sub, nil
}
