// Package sim simulates Bybit's v5 REST API for USDT perpetuals
// (category=linear) on the paper engine: the real paths and parameter
// names, the {retCode, retMsg, result, retExtInfo, time} envelope with
// Bybit's retCodes, the X-BAPI-* headers with HMAC-SHA256 signatures over
// timestamp + key + recvWindow + payload and the timestamp window, and
// per-key, per-endpoint quotas with the X-Bapi-Limit-* headers and 10006.
// The connector's tests run against it; cmd/bybit-sim serves it as a local
// stand-in for Bybit.
//
// Every answer shape follows a page of Bybit's v5 docs, named beside its
// handler (https://bybit-exchange.github.io/docs/v5/...). As on Bybit,
// create and cancel are acknowledgements, a post-only order that would
// take is accepted and then Cancelled with rejectReason
// EC_PostOnlyWillTakeLiquidity, and klines come newest first. Left out:
// hedge-mode trading (SetHedgeMode only shows the two position rows that
// make the connector refuse), limit conditional orders, trailing stops,
// position TP/SL (trading-stop), price bands and the IP limit.
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
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/simkit"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// Config configures a Server. Zero fields take the defaults noted.
type Config struct {
	Now     func() time.Time   // Bybit's clock; default time.Now
	Seed    int64              // price walk seed
	Markets []paper.MarketSpec // default DefaultMarkets()
	Keys    map[string]string  // API key → secret
	// Demo serves Bybit's demo-trading host, which lacks the fee-rate and
	// API-key endpoints (demo page).
	Demo bool
	// Quota is each endpoint's requests per second per API key; default 10
	// for order endpoints and 50 for the rest (rate-limit page).
	Quota map[string]int
	// MaxMarketQty is lotSizeFilter.maxMktOrderQty by symbol; default 1000000.
	MaxMarketQty map[string]decimal.Decimal
	// PageCap caps every history page the sim answers (transaction log),
	// so tests can make the connector page; 0: the documented limits.
	PageCap int
}

// DefaultMarkets are BTCUSDT, ETHUSDT and the multiplier listing
// 1000PEPEUSDT, with Bybit-like filters.
func DefaultMarkets() []paper.MarketSpec {
	d := decimal.RequireFromString
	return []paper.MarketSpec{
		{Symbol: "BTCUSDT", Base: "BTC", Quote: "USDT", StartPrice: d("95000"), TickSize: d("0.1"), LotSize: d("0.001"), MinNotional: d("5"), MaxLeverage: 100},
		{Symbol: "ETHUSDT", Base: "ETH", Quote: "USDT", StartPrice: d("3500"), TickSize: d("0.01"), LotSize: d("0.01"), MinNotional: d("5"), MaxLeverage: 100},
		{Symbol: "1000PEPEUSDT", Base: "1000PEPE", Quote: "USDT", StartPrice: d("0.0125"), TickSize: d("0.0000001"), LotSize: d("100"), MinNotional: d("5"), MaxLeverage: 50},
	}
}

// Failure is an answer the next matching request gets instead of being
// processed (FailNext): an HTTP status other than 200, or a retCode.
type Failure struct {
	Status  int // HTTP status; 0 means 200 with RetCode
	RetCode int
	RetMsg  string
	// After: the request is carried out first and only its answer is
	// replaced, as when Bybit acted but the answer was lost.
	After bool
}

// Server is the simulated Bybit. It is an http.Handler.
type Server struct {
	*simkit.Book[string, Failure] // AddKey, Hits, TotalHits, FailNext

	cfg    Config
	eng    *paper.Engine
	routes map[string]route

	mu      sync.Mutex
	hedge   map[string]bool
	margin  map[string]string      // apiKey → marginMode
	orders  map[string]*bybitOrder // Bybit orderId → order
	byPaper map[string]string      // apiKey + paper id → Bybit orderId
	funding map[string][]execution
	calls   map[string][]time.Time // apiKey + path → request times in the last second
	lag     int                    // order reads by id still to answer empty (LagReads)

	hub  hub     // public websockets (stream.go)
	priv privHub // private websocket (account.go)
}

// New returns a simulator with cfg's defaults filled in.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Markets) == 0 {
		cfg.Markets = DefaultMarkets()
	}
	s := &Server{
		Book:    simkit.New[string, Failure](cfg.Keys),
		cfg:     cfg,
		eng:     paper.New(paper.Config{Seed: cfg.Seed, Now: cfg.Now, Markets: cfg.Markets, MaxLeverage: 100, DefaultLeverage: 10}),
		hedge:   map[string]bool{},
		margin:  map[string]string{},
		orders:  map[string]*bybitOrder{},
		byPaper: map[string]string{},
		funding: map[string][]execution{},
		calls:   map[string][]time.Time{},
		hub:     hub{books: map[string]*numberedBook{}, skip: map[string]int{}},
	}
	s.routes = s.table()
	return s
}

// Engine is the paper engine behind the simulator (tests move prices).
func (s *Server) Engine() *paper.Engine { return s.eng }

// SetHedgeMode puts an account's USDT perpetuals in hedge (Both Sides) or
// one-way mode.
func (s *Server) SetHedgeMode(apiKey string, on bool) {
	s.mu.Lock()
	s.hedge[apiKey] = on
	s.mu.Unlock()
}

// SetMarginMode sets an account's marginMode (REGULAR_MARGIN,
// ISOLATED_MARGIN, PORTFOLIO_MARGIN).
func (s *Server) SetMarginMode(apiKey, mode string) {
	s.mu.Lock()
	s.margin[apiKey] = mode
	s.mu.Unlock()
}

// MarginMode is an account's marginMode.
func (s *Server) MarginMode(apiKey string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.margin[apiKey]; m != "" {
		return m
	}
	return "REGULAR_MARGIN"
}

// AddFunding records a funding settlement in an account's execution list
// (execType Funding), as Bybit lists them beside trades (execution page).
func (s *Server) AddFunding(apiKey, symbol string, fee decimal.Decimal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now().UnixMilli()
	s.funding[apiKey] = append(s.funding[apiKey], execution{Symbol: symbol, OrderID: "", Side: "Sell", ExecID: "funding-" + strconv.FormatInt(now, 10),
		ExecPrice: "0", ExecQty: "0", ExecFee: fee.String(), FeeCurrency: "USDT", ExecType: "Funding", ExecTime: strconv.FormatInt(now, 10)})
}

// LagReads makes the next n reads of an order by id (realtime or
// history) find nothing, as while an order is still in Bybit's intake:
// create is processed asynchronously (create-order page).
func (s *Server) LagReads(n int) {
	s.mu.Lock()
	s.lag = n
	s.mu.Unlock()
}

// route is one endpoint: whether it is signed, and its handler.
type route struct {
	signed bool
	h      func(q *req) (any, *apiErr)
}

// req is one request as a handler sees it.
type req struct {
	key  string
	vals url.Values      // GET query
	body json.RawMessage // POST body
	now  time.Time
}

func (q *req) get(name string) string { return q.vals.Get(name) }

// limit reads the limit parameter: def when absent, else 1 to most,
// refused as Bybit does (10001) otherwise.
func (q *req) limit(def, most int) (int, *apiErr) {
	v := q.get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, errf(10001, "params error: limit must be 1-%d", most)
	}
	return n, nil
}

// decode reads the POST body into v.
func (q *req) decode(v any) *apiErr {
	if err := json.Unmarshal(q.body, v); err != nil {
		return errf(10001, "params error: %v", err)
	}
	return nil
}

// apiErr is a business error: HTTP 200 with retCode != 0 (guide, "Response").
type apiErr struct {
	status int
	code   int
	msg    string
	ext    any
}

func errf(code int, format string, args ...any) *apiErr {
	return &apiErr{status: http.StatusOK, code: code, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v5/public/linear" {
		s.serveStream(rw, r)
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/v5/private" {
		s.servePrivate(rw, r)
		return
	}
	now := s.cfg.Now()
	rt, ok := s.routes[r.Method+" "+r.URL.Path]
	if !ok {
		rw.WriteHeader(http.StatusNotFound) // wrong path or method (guide: HTTP 404)
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	q := &req{vals: r.URL.Query(), body: raw, now: now}
	s.Hit(r.Method, r.URL.Path)
	if rt.signed {
		payload := r.URL.RawQuery
		if r.Method == http.MethodPost {
			payload = string(raw)
		}
		if e := s.authenticate(r, q, payload); e != nil {
			s.write(rw, now, nil, e)
			return
		}
		if e := s.charge(rw, q.key, r.URL.Path, now); e != nil {
			s.write(rw, now, nil, e)
			return
		}
		if f, ok := s.NextFailure(r.Method, r.URL.Path); ok {
			if f.After {
				_, _ = rt.h(q)
			}
			if f.Status != 0 && f.Status != http.StatusOK {
				rw.WriteHeader(f.Status)
				return
			}
			s.write(rw, now, nil, &apiErr{status: http.StatusOK, code: f.RetCode, msg: f.RetMsg})
			return
		}
	}
	out, e := rt.h(q)
	s.write(rw, now, out, e)
}

func (s *Server) write(rw http.ResponseWriter, now time.Time, out any, e *apiErr) {
	rw.Header().Set("Content-Type", "application/json")
	env := map[string]any{"retCode": 0, "retMsg": "OK", "result": out, "retExtInfo": map[string]any{}, "time": now.UnixMilli()}
	if e != nil {
		env["retCode"], env["retMsg"], env["result"] = e.code, e.msg, map[string]any{}
		rw.WriteHeader(e.status)
	} else if ext, ok := out.(withExt); ok {
		env["result"], env["retExtInfo"] = ext.result, ext.ext
	}
	_ = json.NewEncoder(rw).Encode(env)
}

// withExt is a result with retExtInfo (batch endpoints).
type withExt struct{ result, ext any }

// authenticate checks the X-BAPI-* headers (guide, "Authentication"):
// the key, a timestamp with server_time - recv_window <= timestamp <
// server_time + 1000, and the signature of timestamp + key + recvWindow +
// payload (the query string, or the raw JSON body).
func (s *Server) authenticate(r *http.Request, q *req, payload string) *apiErr {
	apiKey, sig := r.Header.Get("X-BAPI-API-KEY"), r.Header.Get("X-BAPI-SIGN")
	tsRaw, windowRaw := r.Header.Get("X-BAPI-TIMESTAMP"), r.Header.Get("X-BAPI-RECV-WINDOW")
	secret, ok := s.Secret(apiKey)
	if apiKey == "" || !ok {
		return errf(10003, "API key is invalid.")
	}
	ts, err := strconv.ParseInt(tsRaw, 10, 64)
	if err != nil {
		return errf(10002, "invalid request, please check your timestamp or recv_window param")
	}
	window := int64(5000)
	if windowRaw != "" {
		if window, err = strconv.ParseInt(windowRaw, 10, 64); err != nil || window <= 0 {
			return errf(10001, "params error: recv_window")
		}
	}
	server := q.now.UnixMilli()
	if server-window > ts || ts >= server+1000 {
		return errf(10002, "invalid request, please check your server timestamp or recv_window param. req_timestamp[%d],server_timestamp[%d],recv_window[%d]", ts, server, window)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(tsRaw + apiKey + windowRaw + payload))
	if !hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(sig)) {
		return errf(10004, "error sign! origin_string[%s]", tsRaw+apiKey+windowRaw+payload)
	}
	q.key = apiKey
	return nil
}

// charge counts a request against its endpoint's per-key quota over a
// rolling second and sets the X-Bapi-Limit-* headers (rate-limit page);
// over the quota the answer is retCode 10006.
func (s *Server) charge(rw http.ResponseWriter, key, path string, now time.Time) *apiErr {
	limit := s.quota(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	id := key + " " + path
	var kept []time.Time
	for _, t := range s.calls[id] {
		if now.Sub(t) < time.Second {
			kept = append(kept, t)
		}
	}
	reset := now
	if len(kept) > 0 {
		reset = kept[0].Add(time.Second)
	}
	rw.Header().Set("X-Bapi-Limit", strconv.Itoa(limit))
	rw.Header().Set("X-Bapi-Limit-Reset-Timestamp", strconv.FormatInt(reset.UnixMilli(), 10))
	if len(kept) >= limit {
		s.calls[id] = kept
		rw.Header().Set("X-Bapi-Limit-Status", "0")
		return errf(10006, "Too many visits. Exceeded the API Rate Limit.")
	}
	kept = append(kept, now)
	s.calls[id] = kept
	if len(kept) == 1 {
		rw.Header().Set("X-Bapi-Limit-Reset-Timestamp", strconv.FormatInt(now.Add(time.Second).UnixMilli(), 10))
	}
	rw.Header().Set("X-Bapi-Limit-Status", strconv.Itoa(limit-len(kept)))
	return nil
}

func (s *Server) quota(path string) int {
	if n, ok := s.cfg.Quota[path]; ok && n > 0 {
		return n
	}
	switch path {
	case "/v5/order/create", "/v5/order/cancel", "/v5/order/cancel-all", "/v5/order/create-batch",
		"/v5/position/set-leverage", "/v5/position/trading-stop":
		return 10
	case "/v5/account/fee-rate", "/v5/account/set-margin-mode":
		return 5
	}
	return 50
}
