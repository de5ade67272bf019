// Package sim simulates Binance USDⓈ-M Futures' REST API (fapi) on the
// paper engine: the real paths, parameter names and JSON bodies, `{code,
// msg}` errors with Binance's codes, the X-MBX-APIKEY header, HMAC-SHA256
// signatures over query string plus body, the timestamp/recvWindow window
// and the per-IP request-weight limit with 429 and 418 answers. The
// connector's tests run against it; cmd/binance-sim serves it as a local
// stand-in for Binance.
//
// Accounts are keyed by API key; each starts with the paper engine's
// starting balance in USDT. Binance behaviour the simulator leaves out:
// hedge-mode positions (it only refuses orders that do not match the
// mode), IOC/FOK, the limit variants of conditional orders, trailing
// stops, the PERCENT_PRICE filter and order-count limits; conditional
// orders always trigger on the mark price.
package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/simkit"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// Config configures a Server. Zero fields take the defaults noted.
type Config struct {
	Now         func() time.Time   // Binance's clock; default time.Now
	Seed        int64              // price walk seed
	Markets     []paper.MarketSpec // default DefaultMarkets()
	WeightLimit int                // REQUEST_WEIGHT per minute; default 2400
	Keys        map[string]string  // API key → secret
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
// 1000PEPEUSDT, with Binance-like filters.
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
}

// Server is the simulated Binance. It is an http.Handler.
type Server struct {
	*simkit.Book[string, Failure] // AddKey, Hits, TotalHits, FailNext

	cfg    Config
	eng    *paper.Engine
	routes map[string]route

	mu          sync.Mutex
	hedge       map[string]bool
	status      map[string]string // symbol → exchangeInfo status, when not TRADING
	rewrite     map[string][]func([]byte) []byte
	margin      map[string]string // apiKey + " " + symbol → CROSSED / ISOLATED
	algos       map[int64]*algo
	algoSeq     int64
	clientSeq   int64
	weightMin   int64 // minute the weight count is for
	weightUsed  int
	throttled   bool                   // a 429 was sent this minute
	bannedUntil time.Time              // 418 until then
	countdowns  map[string]*time.Timer // apiKey + " " + symbol → countdownCancelAll

	hub  hub     // market-data websockets (stream.go)
	priv privHub // user data stream (account.go)
}

// idOffset makes paper order ids look like Binance's (10 digits).
const idOffset = 3_961_340_000

// New returns a simulator with cfg's defaults filled in.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Markets) == 0 {
		cfg.Markets = DefaultMarkets()
	}
	if cfg.WeightLimit <= 0 {
		cfg.WeightLimit = 2400
	}
	s := &Server{
		Book:    simkit.New[string, Failure](cfg.Keys),
		cfg:     cfg,
		eng:     paper.New(paper.Config{Seed: cfg.Seed, Now: cfg.Now, Markets: cfg.Markets, MaxLeverage: 125, DefaultLeverage: 20}),
		hedge:   map[string]bool{},
		status:  map[string]string{},
		rewrite: map[string][]func([]byte) []byte{},
		margin:  map[string]string{},
		algos:   map[int64]*algo{},
		algoSeq: 7_000_000_000,
		hub:     hub{books: map[string]*numberedBook{}, skip: map[string]int{}},
	}
	s.routes = s.table()
	return s
}

// Engine is the paper engine behind the simulator (tests move prices).
func (s *Server) Engine() *paper.Engine { return s.eng }

// RewriteNext passes the next successful answer to method and path
// through f before it is sent, e.g. to answer a read as Binance does when
// its data lags behind.
func (s *Server) RewriteNext(method, path string, f func(body []byte) []byte) {
	s.mu.Lock()
	s.rewrite[method+" "+path] = append(s.rewrite[method+" "+path], f)
	s.mu.Unlock()
}

// SetStatus sets the exchangeInfo status of a symbol (TRADING, SETTLING,
// PENDING_TRADING, ...), as when Binance lists or delists a contract.
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

// SetHedgeMode switches an account between hedge (dual-side) and one-way
// position mode.
func (s *Server) SetHedgeMode(apiKey string, on bool) {
	s.mu.Lock()
	s.hedge[apiKey] = on
	s.mu.Unlock()
}

// apiErr is a Binance error answer.
type apiErr struct {
	status int
	code   int
	msg    string
}

func errf(status, code int, format string, args ...any) *apiErr {
	return &apiErr{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

func badParam(name string) *apiErr {
	return errf(400, -1102, "Mandatory parameter '%s' was not sent, was empty/null, or malformed.", name)
}

// route is one endpoint: its security, IP weight and handler.
type route struct {
	signed bool
	weight func(q *req) int
	h      func(q *req) (any, *apiErr)
}

// req is one request as a handler sees it: its account and parameters
// (query string values win over body values, as on Binance).
type req struct {
	key  string
	vals url.Values
	now  time.Time
}

func (q *req) get(name string) string { return q.vals.Get(name) }

func w(n int) func(*req) int { return func(*req) int { return n } }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && isStreamPath(r.URL.Path) {
		s.serveStream(rw, r)
		return
	}
	if r.Method == http.MethodGet && isPrivatePath(r.URL.Path) {
		s.servePrivate(rw, r)
		return
	}
	if isListenKeyPath(r.URL.Path) {
		s.serveListenKey(rw, r)
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
	q := &req{vals: vals, now: now}
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
		s.write(rw, nil, &apiErr{status: f.Status, code: f.Code, msg: f.Msg}, used)
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
		rw.WriteHeader(e.status)
		_ = json.NewEncoder(rw).Encode(map[string]any{"code": e.code, "msg": e.msg})
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
// limit Binance answers 429; an IP that keeps sending is banned with 418
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

// authenticate checks what Binance checks on a TRADE or USER_DATA call:
// the API key, the timestamp within recvWindow and the signature over
// query string and body (the signature pair left out), joined with no
// separator.
func (s *Server) authenticate(r *http.Request, q *req, rawQuery, rawBody string) *apiErr {
	apiKey := r.Header.Get("X-MBX-APIKEY")
	if apiKey == "" {
		return errf(401, -2014, "API-key format invalid.")
	}
	secret, ok := s.Secret(apiKey)
	if !ok {
		return errf(401, -2015, "Invalid API-key, IP, or permissions for action, request ip: 127.0.0.1")
	}
	qRest, qSig := stripSignature(rawQuery)
	bRest, bSig := stripSignature(rawBody)
	sig := qSig
	if sig == "" {
		sig = bSig
	}
	if sig == "" {
		return badParam("signature")
	}
	ts, err := strconv.ParseInt(q.get("timestamp"), 10, 64)
	if err != nil {
		return badParam("timestamp")
	}
	window := int64(5000)
	if v := q.get("recvWindow"); v != "" {
		if window, err = strconv.ParseInt(v, 10, 64); err != nil || window <= 0 {
			return badParam("recvWindow")
		}
		if window > 60000 {
			return errf(400, -1131, "recvWindow must be less than 60000")
		}
	}
	server := q.now.UnixMilli()
	if ts >= server+1000 {
		return errf(400, -1021, "Timestamp for this request was 1000ms ahead of the server's time.")
	}
	if server-ts > window {
		return errf(400, -1021, "Timestamp for this request is outside of the recvWindow.")
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(qRest + bRest))
	want := hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(sig))) {
		return errf(400, -1022, "Signature for this request is not valid.")
	}
	q.key = apiKey
	return nil
}

// stripSignature removes the signature pair from a raw query string or
// body and returns the rest, byte for byte, and the signature.
func stripSignature(raw string) (string, string) {
	if raw == "" {
		return "", ""
	}
	parts := strings.Split(raw, "&")
	keep := parts[:0:0]
	sig := ""
	for _, p := range parts {
		if v, ok := strings.CutPrefix(p, "signature="); ok && sig == "" {
			sig = v
			continue
		}
		keep = append(keep, p)
	}
	return strings.Join(keep, "&"), sig
}
