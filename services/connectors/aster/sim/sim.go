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
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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

// Failure is an error the next matching request answers with (FailNext);
// HTML answers with Aster's HTML error page (issues #23, #110).
type Failure = fapisim.Failure

// Server is the simulated Aster. It is an http.Handler.
type Server struct {
	*fapisim.Core // the endpoints Aster shares with Binance

	cfg Config
	eng *paper.Engine

	mu         sync.Mutex
	nonces     map[string][]uint64 // signer → its last 100 nonces
	listenKeys map[string]string   // user → listen key
	users      userHub             // user data streams (userstream.go)
}

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
	eng := paper.New(paper.Config{Seed: cfg.Seed, Now: cfg.Now, Markets: cfg.Markets, MaxLeverage: 125, DefaultLeverage: 20})
	s := &Server{
		cfg:        cfg,
		eng:        eng,
		nonces:     map[string][]uint64{},
		listenKeys: map[string]string{},
		users:      userHub{orders: map[string]paper.Order{}, expires: map[string]time.Time{}},
	}
	// Conditional orders are ordinary orders (fact sheet §0 #5); ids and
	// times are strings in single-order answers (§0 #9); cancel-all
	// answers code "200" (§4).
	s.Core = fapisim.NewCore(eng, lowerKeys(cfg.Agents), fapisim.Options{Now: cfg.Now, WeightLimit: cfg.WeightLimit,
		MarketMaxQty: cfg.MarketMaxQty, PageCap: cfg.PageCap, Conditional: true, StringIDs: true, CancelAllCode: "200",
		Auth: s.authenticate, StreamPath: isStreamPath})
	s.Routes = s.table()
	eng.OnEvent(s.onEvent)
	return s
}

// ServeHTTP implements http.Handler: the user data stream, then the
// shared endpoints.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && s.isUserStream(r.URL.Path) {
		s.serveUserStream(rw, r)
		return
	}
	s.Core.ServeHTTP(rw, r)
}

// SetHedgeMode switches the user's account between hedge (dual-side) and
// one-way position mode.
func (s *Server) SetHedgeMode(user string, on bool) { s.Core.SetHedgeMode(strings.ToLower(user), on) }

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
