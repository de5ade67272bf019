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
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/simkit/fapisim"

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
type Failure = fapisim.Failure

// Server is the simulated Binance. It is an http.Handler.
type Server struct {
	*fapisim.Core // the endpoints Binance shares with Aster

	cfg Config
	eng *paper.Engine

	mu      sync.Mutex
	algos   map[int64]*algo
	algoSeq int64

	priv privHub // user data stream (account.go)
}

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
	eng := paper.New(paper.Config{Seed: cfg.Seed, Now: cfg.Now, Markets: cfg.Markets, MaxLeverage: 125, DefaultLeverage: 20})
	s := &Server{cfg: cfg, eng: eng, algos: map[int64]*algo{}, algoSeq: 7_000_000_000}
	// Conditional orders live in the algo service (algo.go); since 2026-07
	// order answers carry no avgPrice and no cumQuote
	// (binance-connector-python 14.0.0 changelog).
	s.Core = fapisim.NewCore(eng, cfg.Keys, fapisim.Options{Now: cfg.Now, WeightLimit: cfg.WeightLimit,
		MarketMaxQty: cfg.MarketMaxQty, PageCap: cfg.PageCap, NoResultAverage: true, CancelAllCode: 200,
		Auth: s.authenticate, StreamPath: isStreamPath})
	s.Routes = s.table()
	return s
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
	ts, err := strconv.ParseInt(q.Get("timestamp"), 10, 64)
	if err != nil {
		return badParam("timestamp")
	}
	window := int64(5000)
	if v := q.Get("recvWindow"); v != "" {
		if window, err = strconv.ParseInt(v, 10, 64); err != nil || window <= 0 {
			return badParam("recvWindow")
		}
		if window > 60000 {
			return errf(400, -1131, "recvWindow must be less than 60000")
		}
	}
	server := q.Now.UnixMilli()
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
	q.Key = apiKey
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
