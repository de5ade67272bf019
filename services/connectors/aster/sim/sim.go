// Package sim simulates Aster's futures V3 REST API (fapi/v3) on the paper
// engine, after the fact sheet's cited pages
// (https://github.com/asterdex/api-docs/blob/master/V3(Recommended)/EN/aster-finance-futures-api-v3.md):
// the real paths, parameter names and JSON bodies, `{code, msg}` errors
// with Aster's codes, EIP-712 signatures (AsterSignTransaction) over the
// parameter string as sent with `signature` last, microsecond nonces kept
// per signer (the last 100; a repeat or one below them refused), agents
// (API wallets) approved per user, the per-IP request-weight limit, the
// listen-key user data stream and HTML 500 pages (issues #23, #110).
// cmd/aster-sim serves it as a local stand-in for Aster.
//
// Accounts are keyed by the user (main wallet) address, lower case; each
// starts with the paper engine's starting balance in USDT. Left out:
// hedge-mode positions (it only refuses orders that do not match the
// mode), IOC/FOK, the limit variants of conditional orders, trailing
// stops, strategy (OCO) orders, the PERCENT_PRICE filter and order-count
// limits; conditional orders always trigger on the mark price.
package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/simkit"
	"github.com/perpgate/perpgate/pkg/simkit/fapisim"
	"github.com/perpgate/perpgate/services/connectors/aster/sign"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// Config configures a Server. Zero fields take the defaults noted.
type Config struct {
	Now         func() time.Time   // Aster's clock; default time.Now
	Seed        int64              // price walk seed
	Markets     []paper.MarketSpec // default DefaultMarkets()
	WeightLimit int                // REQUEST_WEIGHT per minute; default 2400
	// Agents maps each approved API wallet (signer) address to the user
	// (main wallet) it signs for, both lower case.
	Agents map[string]string
	// NonceWindow is how far a nonce may be from the server's clock;
	// default 60 s (asterdex/api-docs PR #157).
	NonceWindow time.Duration
	// MarketMaxQty is MARKET_LOT_SIZE maxQty by symbol, the largest market
	// order (-4005 above it); default 1000000000.
	MarketMaxQty map[string]decimal.Decimal
	// FundingHours are the symbols listed by fundingInfo with an adjusted
	// funding interval in hours; the rest are on the default 8 hours.
	FundingHours map[string]int
	// PageCap caps every history page the sim answers (income), so tests
	// can make the connector page; 0: the documented limits.
	PageCap int
}

// DefaultMarkets are BTCUSDT, ETHUSDT and the multiplier listing
// 1000PEPEUSDT, with Aster-like filters.
func DefaultMarkets() []paper.MarketSpec {
	d := decimal.RequireFromString
	return []paper.MarketSpec{
		{Symbol: "BTCUSDT", Base: "BTC", Quote: "USDT", StartPrice: d("95000"), TickSize: d("0.1"), LotSize: d("0.001"), MinNotional: d("100"), MaxLeverage: 125},
		{Symbol: "ETHUSDT", Base: "ETH", Quote: "USDT", StartPrice: d("3500"), TickSize: d("0.01"), LotSize: d("0.001"), MinNotional: d("20"), MaxLeverage: 100},
		{Symbol: "1000PEPEUSDT", Base: "1000PEPE", Quote: "USDT", StartPrice: d("0.0125"), TickSize: d("0.0000001"), LotSize: d("1"), MinNotional: d("5"), MaxLeverage: 50},
	}
}

// Failure is an error the next matching request answers with (FailNext).
type Failure struct {
	Status     int
	Code       int
	Msg        string
	RetryAfter int // seconds, sent as Retry-After when positive
	// HTML answers with Aster's HTML error page instead of JSON (issues
	// #23, #110: "We're sorry, but something went wrong").
	HTML bool
}

// Server is the simulated Aster. It is an http.Handler.
type Server struct {
	*simkit.Book[string, Failure] // AddKey, Hits, TotalHits, FailNext

	cfg    Config
	eng    *paper.Engine
	routes map[string]route

	mu          sync.Mutex
	hedge       map[string]bool
	status      map[string]string // symbol → exchangeInfo status, when not TRADING
	rewrite     map[string][]func([]byte) []byte
	margins     fapisim.Margins
	nonces      map[string][]uint64 // signer → its last 100 nonces
	listenKeys  map[string]string   // user → listen key
	clientSeq   int64
	weightMin   int64 // minute the weight count is for
	weightUsed  int
	throttled   bool      // a 429 was sent this minute
	bannedUntil time.Time // 418 until then
	countdowns  fapisim.Countdowns

	streams *simkit.MarketStreams // market-data websockets
	users   userHub               // user data streams (userstream.go)
}

// idOffset makes paper order ids look like Aster's (10 digits).
const idOffset = 3_961_340_000

// New returns a simulator with cfg's defaults filled in.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Markets) == 0 {
		cfg.Markets = DefaultMarkets()
	}
	if cfg.NonceWindow <= 0 {
		cfg.NonceWindow = time.Minute
	}
	if cfg.WeightLimit <= 0 {
		cfg.WeightLimit = 2400
	}
	s := &Server{
		Book:       simkit.New[string, Failure](lowerKeys(cfg.Agents)),
		cfg:        cfg,
		eng:        paper.New(paper.Config{Seed: cfg.Seed, Now: cfg.Now, Markets: cfg.Markets, MaxLeverage: 125, DefaultLeverage: 20}),
		hedge:      map[string]bool{},
		status:     map[string]string{},
		rewrite:    map[string][]func([]byte) []byte{},
		nonces:     map[string][]uint64{},
		listenKeys: map[string]string{},
		users:      userHub{orders: map[string]paper.Order{}, expires: map[string]time.Time{}},
	}
	s.eng.OnEvent(s.onEvent)
	s.streams = simkit.NewMarketStreams(s.eng, cfg.Now)
	s.routes = s.table()
	return s
}

// Engine is the paper engine behind the simulator (tests move prices).
func (s *Server) Engine() *paper.Engine { return s.eng }

// RewriteNext passes the next successful answer to method and path
// through f before it is sent, e.g. to answer a read as Aster does when
// its data lags behind.
func (s *Server) RewriteNext(method, path string, f func(body []byte) []byte) {
	s.mu.Lock()
	s.rewrite[method+" "+path] = append(s.rewrite[method+" "+path], f)
	s.mu.Unlock()
}

// SetStatus sets the exchangeInfo status of a symbol (TRADING, SETTLING,
// PENDING_TRADING, ...), as when Aster lists or delists a contract.
func (s *Server) SetStatus(symbol, status string) {
	s.mu.Lock()
	s.status[symbol] = status
	s.mu.Unlock()
}

func (s *Server) symbolStatus(symbol string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.status[symbol]; ok {
		return st
	}
	return "TRADING"
}

// marketMaxQty is the symbol's MARKET_LOT_SIZE maxQty.
func (s *Server) marketMaxQty(symbol string) decimal.Decimal {
	if q, ok := s.cfg.MarketMaxQty[symbol]; ok {
		return q
	}
	return decimal.NewFromInt(1_000_000_000)
}

// ApproveAgent lets signer sign for user, as the "Pro API" page or
// approveAgent does (fact sheet §2.1).
func (s *Server) ApproveAgent(user, signer string) {
	s.AddKey(strings.ToLower(signer), strings.ToLower(user))
}

func lowerKeys(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[strings.ToLower(k)] = strings.ToLower(v)
	}
	return out
}

// SetHedgeMode switches an account between hedge (dual-side) and one-way
// position mode.
func (s *Server) SetHedgeMode(user string, on bool) {
	s.mu.Lock()
	s.hedge[strings.ToLower(user)] = on
	s.mu.Unlock()
}

// The request, error and helpers the Binance-shaped simulators share.
type (
	req         = fapisim.Req
	apiErr      = fapisim.APIErr
	orderFields = fapisim.OrderFields
)

var (
	errf       = fapisim.Errf
	badParam   = fapisim.BadParam
	w          = fapisim.W
	parseQty   = fapisim.ParseQty
	parsePrice = fapisim.ParsePrice
	immediate  = fapisim.Immediate
)

// route is one endpoint: its security, IP weight and handler.
type route struct {
	signed bool
	weight func(q *req) int
	h      func(q *req) (any, *apiErr)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && s.isUserStream(r.URL.Path) {
		s.serveUserStream(rw, r)
		return
	}
	if r.Method == http.MethodGet && isStreamPath(r.URL.Path) {
		s.streams.Serve(rw, r)
		return
	}
	rt, ok := s.routes[r.Method+" "+r.URL.Path]
	if !ok {
		s.write(rw, nil, errf(404, -1000, "Path %s %s not found.", r.Method, r.URL.Path), 0)
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	rawQuery, rawBody := r.URL.RawQuery, string(raw)
	if r.Method == http.MethodGet {
		rawBody = ""
	}
	vals, err := merge(rawQuery, rawBody)
	if err != nil {
		s.write(rw, nil, errf(400, -1102, "Illegal characters found in parameter."), 0)
		return
	}
	now := s.cfg.Now()
	q := &req{Vals: vals, Now: now}
	s.Hit(r.Method, r.URL.Path)
	s.mu.Lock()
	used, limitErr := s.chargeWeight(now, rt.weight(q))
	s.mu.Unlock()
	if limitErr != nil {
		s.write(rw, nil, limitErr, used)
		return
	}
	if rt.signed {
		if e := s.authenticate(r, q, rawQuery, rawBody); e != nil {
			s.write(rw, nil, e, used)
			return
		}
	}
	if f, ok := s.NextFailure(r.Method, r.URL.Path); ok {
		if f.RetryAfter > 0 {
			rw.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		}
		if f.HTML {
			writeHTML(rw, f.Status)
			return
		}
		s.write(rw, nil, &apiErr{Status: f.Status, Code: f.Code, Msg: f.Msg}, used)
		return
	}
	out, e := rt.h(q)
	if e == nil {
		s.mu.Lock()
		fs := s.rewrite[r.Method+" "+r.URL.Path]
		if len(fs) > 0 {
			s.rewrite[r.Method+" "+r.URL.Path] = fs[1:]
		}
		s.mu.Unlock()
		if len(fs) > 0 {
			raw, _ := json.Marshal(out)
			out = json.RawMessage(fs[0](raw))
		}
	}
	s.write(rw, out, e, used)
}

func (s *Server) write(rw http.ResponseWriter, out any, e *apiErr, used int) {
	rw.Header().Set("Content-Type", "application/json")
	if used > 0 {
		rw.Header().Set("X-MBX-USED-WEIGHT-1M", strconv.Itoa(used))
	}
	if e != nil {
		rw.WriteHeader(e.Status)
		_ = json.NewEncoder(rw).Encode(map[string]any{"code": e.Code, "msg": e.Msg})
		return
	}
	_ = json.NewEncoder(rw).Encode(out)
}

// merge reads the query string and the form body; query values win.
func merge(rawQuery, rawBody string) (url.Values, error) {
	body, err := url.ParseQuery(rawBody)
	if err != nil {
		return nil, err
	}
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, err
	}
	for k, v := range query {
		body[k] = v
	}
	return body, nil
}

// chargeWeight counts a request against the IP's minute budget. Past the
// limit Aster answers 429; an IP that keeps sending is banned with 418
// (fact sheet §10).
func (s *Server) chargeWeight(now time.Time, weight int) (int, *apiErr) {
	if now.Before(s.bannedUntil) {
		return s.weightUsed, errf(418, -1003, "Way too many requests; IP(127.0.0.1) banned until %d. Please use the websocket for live updates to avoid bans.", s.bannedUntil.UnixMilli())
	}
	minute := now.Unix() / 60
	if minute != s.weightMin {
		s.weightMin, s.weightUsed, s.throttled = minute, 0, false
	}
	if s.throttled {
		s.bannedUntil = now.Add(2 * time.Minute)
		return s.weightUsed, errf(418, -1003, "Way too many requests; IP(127.0.0.1) banned until %d. Please use the websocket for live updates to avoid bans.", s.bannedUntil.UnixMilli())
	}
	s.weightUsed += weight
	if s.weightUsed > s.cfg.WeightLimit {
		s.throttled = true
		return s.weightUsed, errf(429, -1003, "Too many requests; current limit of IP(127.0.0.1) is %d requests per minute. Please use the websocket for live updates to avoid polling the API.", s.cfg.WeightLimit)
	}
	return s.weightUsed, nil
}

// writeHTML answers as Aster's front does when its backend fails.
func writeHTML(rw http.ResponseWriter, status int) {
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.WriteHeader(status)
	_, _ = io.WriteString(rw, "<!DOCTYPE html><html><head><title>We're sorry, but something went wrong (500)</title></head>"+
		"<body><h1>We're sorry, but something went wrong.</h1></body></html>")
}

// authenticate checks a V3 signed call (fact sheet §2.2): user, signer,
// nonce and signature present, signature the last parameter, the EIP-712
// signature over the rest of the string as sent recovering to signer, the
// signer an agent of user, and the nonce within the window and new for
// the signer. The signed string is the query (GET) or the body, not both
// (how a split would be joined is unconfirmed: the sim refuses it).
func (s *Server) authenticate(_ *http.Request, q *req, rawQuery, rawBody string) *apiErr {
	raw := rawBody
	if rawQuery != "" {
		if rawBody != "" {
			return errf(400, -1022, "Signature for this request is not valid.")
		}
		raw = rawQuery
	}
	for _, p := range []string{"user", "signer", "nonce", "signature"} {
		if q.Get(p) == "" {
			return badParam(p)
		}
	}
	msg, sig, ok := strings.Cut(raw, "&signature=")
	if !ok || strings.Contains(sig, "&") {
		return errf(400, -1022, "Signature for this request is not valid.")
	}
	signer, user := strings.ToLower(q.Get("signer")), strings.ToLower(q.Get("user"))
	if !s.signedBy(msg, sig, signer) {
		return errf(400, -1022, "Signature for this request is not valid.")
	}
	// The code for an unapproved signer is unconfirmed (fact sheet §9):
	// the sim answers Binance's -2015 from Aster's error table.
	if owner, ok := s.Secret(signer); !ok || owner != user {
		return errf(401, -2015, "Invalid API-key, IP, or permissions for action.")
	}
	if e := s.useNonce(signer, q.Get("nonce"), q.Now); e != nil {
		return e
	}
	q.Key = user
	return nil
}

// signedBy reports whether sig over msg recovers to signer under either
// chain id (the sim serves mainnet and testnet credentials on one host).
func (s *Server) signedBy(msg, sig, signer string) bool {
	for _, chain := range []int64{sign.MainnetChainID, sign.TestnetChainID} {
		if who, err := sign.Recover(msg, sig, chain); err == nil && who == signer {
			return true
		}
	}
	return false
}

// nonceKeep is how many nonces the venue remembers per signer.
const nonceKeep = 100

// useNonce applies the nonce rule (fact sheet §2.2): microseconds within
// the window of server time, never used before by the signer, not below
// the smallest kept once 100 are kept.
func (s *Server) useNonce(signer, v string, now time.Time) *apiErr {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return badParam("nonce")
	}
	server := now.UnixMicro()
	window := s.cfg.NonceWindow.Microseconds()
	if int64(n) > server+window {
		return errf(400, -1021, "Timestamp for this request was 1000ms ahead of the server's time.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.nonces[signer]
	if int64(n) < server-window || slices.Contains(kept, n) || (len(kept) >= nonceKeep && n < slices.Min(kept)) {
		return errf(400, -4225, "Nonce Expired")
	}
	kept = append(kept, n)
	if len(kept) > nonceKeep {
		kept = slices.Delete(kept, slices.Index(kept, slices.Min(kept)), slices.Index(kept, slices.Min(kept))+1)
	}
	s.nonces[signer] = kept
	return nil
}
