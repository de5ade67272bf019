// Package sim simulates OKX's v5 REST API for USDT-margined swaps on the
// paper engine: the real paths, JSON bodies and the {code,msg,data}
// envelope with OKX's codes and per-item sCode/sMsg, sizes in contracts
// of ctVal base units, the OK-ACCESS-KEY/SIGN/TIMESTAMP/PASSPHRASE
// headers with base64 HMAC-SHA256 signatures over timestamp + method +
// path?query + body, the timestamp window, and the x-simulated-trading
// header that separates demo keys from live ones (50101). The connector's
// tests run against it; cmd/okx-sim serves it as a local stand-in for OKX.
//
// Accounts are keyed by API key; each starts with the paper engine's
// starting balance in USDT. OKX behaviour the simulator leaves out:
// long/short position mode (it only refuses orders without posSide),
// isolated margin, the limit variants of algo orders, amend, trailing
// stops, price limits and request-rate limits (FailNext answers them).
package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/simkit"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// Instrument is one simulated SWAP instrument; sizes are in contracts of
// CtVal base units, as on OKX.
type Instrument struct {
	InstID     string // e.g. BTC-USDT-SWAP
	Base       string // e.g. BTC
	CtVal      decimal.Decimal
	LotSz      decimal.Decimal // contracts
	MinSz      decimal.Decimal // contracts
	MaxMktSz   decimal.Decimal // contracts
	TickSz     decimal.Decimal
	StartPrice decimal.Decimal
	Lever      int
}

// DefaultInstruments are BTC-USDT-SWAP (ctVal 0.01 BTC, lots of 0.01
// contracts), ETH-USDT-SWAP (ctVal 0.1 ETH) and DOGE-USDT-SWAP (ctVal 10
// DOGE, whole contracts), with OKX-like rules.
func DefaultInstruments() []Instrument {
	d := decimal.RequireFromString
	return []Instrument{
		{InstID: "BTC-USDT-SWAP", Base: "BTC", CtVal: d("0.01"), LotSz: d("0.01"), MinSz: d("0.01"), MaxMktSz: d("5000"), TickSz: d("0.1"), StartPrice: d("95000"), Lever: 100},
		{InstID: "ETH-USDT-SWAP", Base: "ETH", CtVal: d("0.1"), LotSz: d("0.01"), MinSz: d("0.01"), MaxMktSz: d("10000"), TickSz: d("0.01"), StartPrice: d("3500"), Lever: 100},
		{InstID: "DOGE-USDT-SWAP", Base: "DOGE", CtVal: d("10"), LotSz: d("1"), MinSz: d("1"), MaxMktSz: d("100000"), TickSz: d("0.00001"), StartPrice: d("0.35"), Lever: 75},
	}
}

// Key is one API key of the simulator.
type Key struct {
	Secret     string
	Passphrase string
	Demo       bool // a demo-trading key: requests must carry x-simulated-trading: 1
}

// Config configures a Server. Zero fields take the defaults noted.
type Config struct {
	Now         func() time.Time // OKX's clock; default time.Now
	Seed        int64            // price walk seed
	Instruments []Instrument     // default DefaultInstruments()
	Keys        map[string]Key   // API key → secret, passphrase, environment
	// PageCap caps every history page the sim answers (bills), so tests
	// can make the connector page; 0: the documented limits.
	PageCap int
}

// Failure is an answer the next matching request gets instead of being
// processed (FailNext).
type Failure struct {
	Status     int // HTTP status; 0 means 200
	Code       string
	Msg        string
	RetryAfter int // seconds, sent as Retry-After when positive
}

// Server is the simulated OKX. It is an http.Handler.
type Server struct {
	*simkit.Book[Key, Failure] // AddKey, Hits, TotalHits, FailNext

	cfg    Config
	eng    *paper.Engine
	insts  map[string]Instrument
	order  []string
	routes map[string]route

	mu      sync.Mutex
	modes   map[string]accountMode
	rewrite map[string][]func([]byte) []byte
	algos   map[string]*algo
	algoSeq int64
	dead    map[string]deadOrder // post-only orders OKX accepted and cancelled
	deadSeq int64
	after   map[string]*time.Timer // apiKey → cancel-all-after countdown

	ws   simkit.Sockets[*websocket.Conn] // public websockets (stream.go)
	priv privHub                         // private websocket (private.go)
}

type accountMode struct {
	acctLv  string
	posMode string
}

// Id offsets make paper ids look like OKX's 19-digit ids; the first regular
// order is 1752588852617379840, as in the signing vectors.
const (
	ordOffset  = 1752588852617379839 - 100000000 // paper order ids start after 100000000
	deadOffset = 1752588852917379839
	algoOffset = 2100000000000000000
	fillOffset = 1000000000
)

// timestampWindow is how far OK-ACCESS-TIMESTAMP may be from OKX's clock.
// OKX does not publish it (fact sheet §2: UNCONFIRMED); 30 s is what
// users report.
const timestampWindow = 30 * time.Second

// New returns a simulator with cfg's defaults filled in.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Instruments) == 0 {
		cfg.Instruments = DefaultInstruments()
	}
	var specs []paper.MarketSpec
	s := &Server{Book: simkit.New[Key, Failure](cfg.Keys), cfg: cfg, insts: map[string]Instrument{}, modes: map[string]accountMode{},
		rewrite: map[string][]func([]byte) []byte{},
		algos:   map[string]*algo{}, dead: map[string]deadOrder{}}
	for _, in := range cfg.Instruments {
		s.insts[in.InstID] = in
		s.order = append(s.order, in.InstID)
		specs = append(specs, paper.MarketSpec{Symbol: in.InstID, Base: in.Base, Quote: "USDT", StartPrice: in.StartPrice,
			TickSize: in.TickSz, LotSize: in.LotSz.Mul(in.CtVal), MinNotional: decimal.Zero, MaxLeverage: in.Lever})
	}
	s.eng = paper.New(paper.Config{Seed: cfg.Seed, Now: cfg.Now, Markets: specs, MaxLeverage: 125, DefaultLeverage: 20})
	s.routes = s.table()
	return s
}

// Engine is the paper engine behind the simulator (tests move prices).
func (s *Server) Engine() *paper.Engine { return s.eng }

// SetAccountMode sets an account's acctLv ("1" Spot, "2" Futures, "3"
// Multi-currency, "4" Portfolio) and posMode (net_mode, long_short_mode).
// The default is Futures mode, net_mode.
func (s *Server) SetAccountMode(apiKey, acctLv, posMode string) {
	s.mu.Lock()
	s.modes[apiKey] = accountMode{acctLv: acctLv, posMode: posMode}
	s.mu.Unlock()
}

func (s *Server) mode(key string) accountMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.modes[key]; ok {
		return m
	}
	return accountMode{acctLv: "2", posMode: "net_mode"}
}

// RewriteNext passes the next successful answer's data array to method
// and path through f before it is sent.
func (s *Server) RewriteNext(method, path string, f func(data []byte) []byte) {
	s.mu.Lock()
	s.rewrite[method+" "+path] = append(s.rewrite[method+" "+path], f)
	s.mu.Unlock()
}

// apiErr is an OKX error answer: HTTP status, code, message and, for
// trading endpoints, the per-item data.
type apiErr struct {
	status int
	code   string
	msg    string
	data   any
}

func errf(code string, format string, args ...any) *apiErr {
	return &apiErr{status: 200, code: code, msg: fmt.Sprintf(format, args...)}
}

func authErr(code, msg string) *apiErr { return &apiErr{status: 401, code: code, msg: msg} }

func badParam(name string) *apiErr { return errf("51000", "Parameter %s error", name) }

// route is one endpoint: whether it is private, and its handler.
type route struct {
	signed bool
	h      func(q *req) (any, *apiErr)
}

// req is one request as a handler sees it: its account, query and body.
type req struct {
	key   string
	query url.Values
	body  []byte
	now   time.Time
}

func (q *req) get(name string) string { return q.query.Get(name) }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/ws/v5/public" {
		s.serveStream(rw, r)
		return
	}
	if r.Method == http.MethodGet && isPrivatePath(r.URL.Path) {
		s.servePrivate(rw, r)
		return
	}
	rt, ok := s.routes[r.Method+" "+r.URL.Path]
	if !ok {
		s.write(rw, r, nil, &apiErr{status: 404, code: "50000", msg: "Not Found"})
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	q := &req{query: r.URL.Query(), body: body, now: s.cfg.Now()}
	s.Hit(r.Method, r.URL.Path)
	if rt.signed {
		if e := s.authenticate(r, q); e != nil {
			s.write(rw, r, nil, e)
			return
		}
	} else if e := s.checkEnvironmentHeader(r); e != nil {
		s.write(rw, r, nil, e)
		return
	}
	if f, ok := s.NextFailure(r.Method, r.URL.Path); ok {
		if f.RetryAfter > 0 {
			rw.Header().Set("Retry-After", fmt.Sprint(f.RetryAfter))
		}
		s.write(rw, r, nil, &apiErr{status: max(f.Status, 200), code: f.Code, msg: f.Msg})
		return
	}
	out, e := rt.h(q)
	s.write(rw, r, out, e)
}

// checkEnvironmentHeader refuses a malformed x-simulated-trading header.
func (s *Server) checkEnvironmentHeader(r *http.Request) *apiErr {
	if v := r.Header.Get("x-simulated-trading"); v != "" && v != "1" && v != "0" {
		return errf("50038", "This feature is unavailable in demo trading")
	}
	return nil
}

// write sends the envelope (https://www.okx.com/docs-v5/en/#overview-rest-authentication
// and #error-code): {"code":"0","msg":"","data":[...]}, or the error's
// code and msg with its per-item data.
func (s *Server) write(rw http.ResponseWriter, r *http.Request, out any, e *apiErr) {
	rw.Header().Set("Content-Type", "application/json")
	if e != nil {
		rw.WriteHeader(e.status)
		data := e.data
		if data == nil {
			data = []any{}
		}
		_ = json.NewEncoder(rw).Encode(map[string]any{"code": e.code, "msg": e.msg, "data": data})
		return
	}
	if env, ok := out.(envelope); ok { // batch answers choose their own code
		_ = json.NewEncoder(rw).Encode(map[string]any{"code": env.code, "msg": env.msg, "data": s.rewritten(r, env.data)})
		return
	}
	_ = json.NewEncoder(rw).Encode(map[string]any{"code": "0", "msg": "", "data": s.rewritten(r, out)})
}

// envelope is an answer with its own top-level code (1 all failed, 2
// partly): the batch endpoints.
type envelope struct {
	code, msg string
	data      any
}

func (s *Server) rewritten(r *http.Request, data any) any {
	k := r.Method + " " + r.URL.Path
	s.mu.Lock()
	fs := s.rewrite[k]
	if len(fs) > 0 {
		s.rewrite[k] = fs[1:]
	}
	s.mu.Unlock()
	if len(fs) == 0 {
		return data
	}
	raw, _ := json.Marshal(data)
	return json.RawMessage(fs[0](raw))
}

// authenticate checks what OKX checks on a private call
// (https://www.okx.com/docs-v5/en/#overview-rest-authentication-making-requests):
// the four OK-ACCESS headers, the key's environment against
// x-simulated-trading, the timestamp format and window, the passphrase and
// the base64 HMAC-SHA256 of timestamp + METHOD + path?query + body.
func (s *Server) authenticate(r *http.Request, q *req) *apiErr {
	apiKey := r.Header.Get("OK-ACCESS-KEY")
	if apiKey == "" {
		return authErr("50103", "Request header OK-ACCESS-KEY cannot be empty.")
	}
	pass := r.Header.Get("OK-ACCESS-PASSPHRASE")
	if pass == "" {
		return authErr("50104", "Request header OK-ACCESS-PASSPHRASE cannot be empty.")
	}
	sig := r.Header.Get("OK-ACCESS-SIGN")
	if sig == "" {
		return authErr("50106", "Request header OK-ACCESS-SIGN cannot be empty.")
	}
	ts := r.Header.Get("OK-ACCESS-TIMESTAMP")
	if ts == "" {
		return authErr("50107", "Request header OK-ACCESS-TIMESTAMP cannot be empty.")
	}
	k, ok := s.Secret(apiKey)
	if !ok {
		return authErr("50111", "Invalid OK-ACCESS-KEY.")
	}
	if demo := r.Header.Get("x-simulated-trading") == "1"; demo != k.Demo {
		return authErr("50101", "APIKey does not match current environment.")
	}
	t, err := time.Parse("2006-01-02T15:04:05.000Z", ts)
	if err != nil {
		return authErr("50112", "Invalid OK-ACCESS-TIMESTAMP.")
	}
	if d := q.now.Sub(t); d > timestampWindow || d < -timestampWindow {
		return authErr("50102", "Timestamp request expired.")
	}
	if !hmac.Equal([]byte(pass), []byte(k.Passphrase)) {
		return authErr("50105", "Invalid OK-ACCESS-PASSPHRASE.")
	}
	path := r.URL.Path
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	m := hmac.New(sha256.New, []byte(k.Secret))
	m.Write([]byte(ts + r.Method + path + string(q.body)))
	if !hmac.Equal([]byte(base64.StdEncoding.EncodeToString(m.Sum(nil))), []byte(sig)) {
		return authErr("50113", "Invalid Sign.")
	}
	q.key = apiKey
	return nil
}
