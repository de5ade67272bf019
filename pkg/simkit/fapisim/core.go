package fapisim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit"
	"github.com/shopspring/decimal"
)

// Options are what differs between the venues in the shared endpoints.
type Options struct {
	Now         func() time.Time // the venue's clock
	WeightLimit int              // REQUEST_WEIGHT per minute
	// MarketMaxQty is MARKET_LOT_SIZE maxQty by symbol; default 1000000000.
	MarketMaxQty map[string]decimal.Decimal
	// PageCap caps every history page (income), so tests can make the
	// connector page; 0: the documented limits.
	PageCap int
	// Conditional: STOP_MARKET and TAKE_PROFIT_MARKET are ordinary orders
	// with stopPrice, listed, looked up and cancelled with the others
	// (Aster). Else the order endpoint refuses them (-4120) and they live
	// in the venue's algo service (Binance).
	Conditional bool
	// StringIDs: single-order and openOrders answers carry orderId, time
	// and updateTime as strings (Aster, recorded); batch answers numbers.
	StringIDs bool
	// NoResultAverage: New Order (RESULT) and Cancel Order answers carry no
	// avgPrice and no cumQuote (Binance since 2026-07).
	NoResultAverage bool
	// CancelAllCode is the code of the cancel-all answer: 200 (Binance) or
	// "200" (Aster, recorded).
	CancelAllCode any
	// Auth checks a signed request and sets q.Key to its account.
	Auth func(r *http.Request, q *Req, rawQuery, rawBody string) *APIErr
	// StreamPath reports the market-data websocket routes.
	StreamPath func(path string) bool
}

// Core is the state and endpoints both simulators have; a simulator
// embeds it, sets Routes and adds its own endpoints.
type Core struct {
	*simkit.Book[string, Failure] // AddKey, Hits, TotalHits, FailNext

	Eng     *paper.Engine
	Streams *simkit.MarketStreams // market-data websockets
	Routes  map[string]Route
	opt     Options

	margins    Margins
	countdowns Countdowns

	mu          sync.Mutex
	hedge       map[string]bool
	status      map[string]string // symbol → exchangeInfo status, when not TRADING
	rewrite     map[string][]func([]byte) []byte
	clientSeq   int64
	weightMin   int64 // minute the weight count is for
	weightUsed  int
	throttled   bool      // a 429 was sent this minute
	bannedUntil time.Time // 418 until then
}

// NewCore is a core on eng whose keys are keys (API key or signer → the
// secret or account the venue's Auth reads).
func NewCore(eng *paper.Engine, keys map[string]string, opt Options) *Core {
	return &Core{
		Book:    simkit.New[string, Failure](keys),
		Eng:     eng,
		Streams: simkit.NewMarketStreams(eng, opt.Now),
		opt:     opt,
		hedge:   map[string]bool{},
		status:  map[string]string{},
		rewrite: map[string][]func([]byte) []byte{},
	}
}

// Engine is the paper engine behind the simulator (tests move prices).
func (s *Core) Engine() *paper.Engine { return s.Eng }

// idOffset makes paper order ids look like the venues' (10 digits).
const idOffset = 3_961_340_000

// Pub and Sig make a route: unsigned (market data) or signed.
func Pub(weight func(*Req) int, h func(*Req) (any, *APIErr)) Route {
	return Route{Weight: weight, H: h}
}

// Sig is a signed route (TRADE, USER_DATA, USER_STREAM).
func Sig(weight func(*Req) int, h func(*Req) (any, *APIErr)) Route {
	return Route{Signed: true, Weight: weight, H: h}
}

// BySymbol weighs a request with or without symbol differently.
func BySymbol(with, without int) func(*Req) int {
	return func(q *Req) int {
		if q.Get("symbol") != "" {
			return with
		}
		return without
	}
}

var ErrBadSymbol = Errf(400, -1121, "Invalid symbol.")

// market looks the symbol parameter up; required says whether it must be there.
func (s *Core) Market(q *Req, required bool) (paper.MarketInfo, *APIErr) {
	sym := q.Get("symbol")
	if sym == "" {
		if required {
			return paper.MarketInfo{}, BadParam("symbol")
		}
		return paper.MarketInfo{}, nil
	}
	m, err := s.Eng.Market(sym)
	if err != nil || sym != m.Symbol {
		return paper.MarketInfo{}, ErrBadSymbol
	}
	return m, nil
}

func (s *Core) ExchangeInfo(q *Req) (any, *APIErr) {
	var syms []WireSymbol
	for _, m := range s.Eng.Markets() {
		syms = append(syms, WireSymbol{
			Symbol: m.Symbol, Pair: m.Symbol, ContractType: "PERPETUAL", DeliveryDate: 4133404800000, OnboardDate: 1569398400000,
			Status: s.symbolStatus(m.Symbol), BaseAsset: m.Base, QuoteAsset: m.Quote, MarginAsset: m.Quote,
			PricePrecision: decimals(m.TickSize), QuantityPrecision: decimals(m.LotSize), UnderlyingType: "COIN", TriggerProtect: "0.0500",
			Filters: []Filter{
				{"filterType": "PRICE_FILTER", "minPrice": m.TickSize.String(), "maxPrice": "4529764", "tickSize": m.TickSize.String()},
				{"filterType": "LOT_SIZE", "minQty": m.LotSize.String(), "maxQty": "1000000000", "stepSize": m.LotSize.String()},
				{"filterType": "MARKET_LOT_SIZE", "minQty": m.LotSize.String(), "maxQty": s.MarketMaxQty(m.Symbol).String(), "stepSize": m.LotSize.String()},
				{"filterType": "MAX_NUM_ORDERS", "limit": 200},
				{"filterType": "MAX_NUM_ALGO_ORDERS", "limit": 10},
				{"filterType": "MIN_NOTIONAL", "notional": m.MinNotional.String()},
				{"filterType": "PERCENT_PRICE", "multiplierUp": "1.0500", "multiplierDown": "0.9500", "multiplierDecimal": "4"},
			},
			OrderTypes:  []string{"LIMIT", "MARKET", "STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET", "TRAILING_STOP_MARKET"},
			TimeInForce: []string{"GTC", "IOC", "FOK", "GTX", "GTD"},
		})
	}
	// A delivery contract, which the connector must not list.
	syms = append(syms, WireSymbol{Symbol: "BTCUSDT_261225", Pair: "BTCUSDT", ContractType: "CURRENT_QUARTER", Status: "TRADING",
		BaseAsset: "BTC", QuoteAsset: "USDT", MarginAsset: "USDT", Filters: []Filter{{"filterType": "PRICE_FILTER", "tickSize": "0.1"}}})
	return map[string]any{
		"timezone":    "UTC",
		"serverTime":  q.Now.UnixMilli(),
		"futuresType": "U_MARGINED",
		"rateLimits": []map[string]any{
			{"rateLimitType": "REQUEST_WEIGHT", "interval": "MINUTE", "intervalNum": 1, "limit": s.opt.WeightLimit},
			{"rateLimitType": "ORDERS", "interval": "MINUTE", "intervalNum": 1, "limit": 1200},
			{"rateLimitType": "ORDERS", "interval": "SECOND", "intervalNum": 10, "limit": 300},
		},
		"exchangeFilters": []any{},
		"assets":          []map[string]any{{"asset": "USDT", "marginAvailable": true, "autoAssetExchange": "-10000"}},
		"symbols":         syms,
	}, nil
}

func (s *Core) Depth(q *Req) (any, *APIErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	limit := 500
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if _, ok := depthLimits[n]; err != nil || !ok {
			return nil, Errf(400, -4021, "Invalid depth limit.")
		}
		limit = n
	}
	side := func(ls []paper.Level) [][2]string {
		out := make([][2]string, min(len(ls), limit))
		for i := range out {
			out[i] = [2]string{ls[i].Price.String(), ls[i].Size.String()}
		}
		return out
	}
	t := q.Now.UnixMilli()
	// While a depth stream runs, its numbered book is the answer, so a
	// client can line the stream's update ids up with lastUpdateId.
	if id, bids, asks, ok := s.Streams.Numbered(m.Symbol); ok {
		return map[string]any{"lastUpdateId": id, "E": t, "T": t, "bids": side(bids), "asks": side(asks)}, nil
	}
	b, err := s.Eng.Orderbook(m.Symbol, min(limit, 500))
	if err != nil {
		return nil, Errf(500, -1000, "%v", err)
	}
	return map[string]any{"lastUpdateId": t, "E": t, "T": t, "bids": side(b.Bids), "asks": side(b.Asks)}, nil
}

func (s *Core) PremiumIndex(q *Req) (any, *APIErr) {
	m, e := s.Market(q, false)
	if e != nil {
		return nil, e
	}
	if m.Symbol != "" {
		return premium(m, q.Now.UnixMilli()), nil
	}
	var out []map[string]any
	for _, m := range s.Eng.Markets() {
		out = append(out, premium(m, q.Now.UnixMilli()))
	}
	return out, nil
}

func (s *Core) Klines(q *Req) (any, *APIErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	iv, ok := klineMinutes[q.Get("interval")]
	if !ok {
		return nil, Errf(400, -1120, "Invalid interval.")
	}
	limit := 500
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1500 {
			return nil, Errf(400, -1130, "Data sent for parameter 'limit' is not valid.")
		}
		limit = n
	}
	cs, err := s.Eng.Candles(m.Symbol, iv, limit)
	if err != nil {
		return nil, Errf(500, -1000, "%v", err)
	}
	out := make([][]any, len(cs))
	for i, c := range cs {
		open := c.Time.UnixMilli()
		out[i] = []any{open, c.Open.String(), c.High.String(), c.Low.String(), c.Close.String(), c.Volume.String(),
			open + int64(iv)*60000 - 1, c.Volume.Mul(c.Close).String(), 100, "0", "0", "0"}
	}
	return out, nil
}

func (s *Core) CommissionRate(q *Req) (any, *APIErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	f := s.Eng.Fees()
	bp := decimal.NewFromInt(10000)
	return map[string]any{"symbol": m.Symbol, "makerCommissionRate": f.MakerBps.Div(bp).String(),
		"takerCommissionRate": f.TakerBps.Div(bp).String(), "rpiCommissionRate": "0"}, nil
}

func (s *Core) Account(q *Req) (any, *APIErr) {
	b, err := s.Eng.Balance(q.Key)
	if err != nil {
		return nil, Errf(500, -1000, "%v", err)
	}
	asset := map[string]any{"asset": "USDT", "walletBalance": b.Wallet.String(), "unrealizedProfit": b.UnrealizedPnL.String(),
		"marginBalance": b.Equity.String(), "maintMargin": "0", "initialMargin": b.PositionMargin.Add(b.OrderMargin).String(),
		"positionInitialMargin": b.PositionMargin.String(), "openOrderInitialMargin": b.OrderMargin.String(),
		"crossWalletBalance": b.Wallet.String(), "crossUnPnl": b.UnrealizedPnL.String(), "availableBalance": b.FreeCollateral.String(),
		"maxWithdrawAmount": b.FreeCollateral.String(), "updateTime": q.Now.UnixMilli()}
	return map[string]any{
		"totalInitialMargin": b.PositionMargin.Add(b.OrderMargin).String(), "totalMaintMargin": "0",
		"totalWalletBalance": b.Wallet.String(), "totalUnrealizedProfit": b.UnrealizedPnL.String(),
		"totalMarginBalance": b.Equity.String(), "totalPositionInitialMargin": b.PositionMargin.String(),
		"totalOpenOrderInitialMargin": b.OrderMargin.String(), "totalCrossWalletBalance": b.Wallet.String(),
		"totalCrossUnPnl": b.UnrealizedPnL.String(), "availableBalance": b.FreeCollateral.String(),
		"maxWithdrawAmount": b.FreeCollateral.String(), "assets": []any{asset}, "positions": []any{},
	}, nil
}

func (s *Core) UserTrades(q *Req) (any, *APIErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	limit := 500
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return nil, Errf(400, -1130, "Data sent for parameter 'limit' is not valid.")
		}
		limit = n
	}
	var wantOrder string
	if v := q.Get("orderId"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, BadParam("orderId")
		}
		wantOrder = PaperID(n)
	}
	fills, err := s.Eng.Fills(q.Key, m.Symbol, 10000)
	if err != nil {
		return nil, Errf(500, -1000, "%v", err)
	}
	var picked []paper.Fill // newest first
	for _, f := range fills {
		if (wantOrder == "" || f.OrderID == wantOrder) && len(picked) < limit {
			picked = append(picked, f)
		}
	}
	out := make([]map[string]any, 0, len(picked))
	for i := len(picked) - 1; i >= 0; i-- { // the venue answers oldest first
		f := picked[i]
		id, _ := strconv.ParseInt(f.ID, 10, 64)
		out = append(out, map[string]any{
			"symbol": f.Market, "id": id, "orderId": VenueID(f.OrderID), "side": string(f.Side), "price": f.Price.String(),
			"qty": f.Size.String(), "realizedPnl": f.RealizedPnL.String(), "quoteQty": f.Size.Mul(f.Price).String(),
			"commission": f.Fee.String(), "commissionAsset": "USDT", "time": f.Time.UnixMilli(), "positionSide": "BOTH",
			"buyer": f.Side == paper.Buy, "maker": f.Liquidity == paper.Maker,
		})
	}
	return out, nil
}

func (s *Core) ModeCheck(key string, get OrderFields) *APIErr {
	s.mu.Lock()
	hedge := s.hedge[key]
	s.mu.Unlock()
	ps := get("positionSide")
	if hedge && (ps == "" || ps == "BOTH") || !hedge && ps != "" && ps != "BOTH" {
		return Errf(400, -4061, "Order's position side does not match user's setting.")
	}
	if hedge && get("reduceOnly") != "" {
		return Errf(400, -1106, "Parameter 'reduceonly' sent when not required.")
	}
	if hedge {
		return Errf(400, -1000, "The simulator does not model hedge-mode positions.")
	}
	return nil
}

// place runs New Order's checks and places the order in the engine.
func (s *Core) Place(key string, get OrderFields) (paper.Order, *APIErr) {
	m, err := s.Eng.Market(get("symbol"))
	if get("symbol") == "" {
		return paper.Order{}, BadParam("symbol")
	}
	if err != nil || m.Symbol != get("symbol") {
		return paper.Order{}, ErrBadSymbol
	}
	side := get("side")
	if side != "BUY" && side != "SELL" {
		return paper.Order{}, Errf(400, -1117, "Invalid side.")
	}
	typ := get("type")
	switch {
	case typ == "LIMIT", typ == "MARKET", s.opt.Conditional && (typ == "STOP_MARKET" || typ == "TAKE_PROFIT_MARKET"):
	case !s.opt.Conditional && conditional(typ):
		return paper.Order{}, Errf(400, -4120, "Order type not supported for this endpoint. Please use the Algo Order API endpoints instead.")
	case conditional(typ):
		return paper.Order{}, Errf(400, -1116, "Invalid orderType (the simulator has no %s orders).", typ)
	default:
		return paper.Order{}, Errf(400, -1116, "Invalid orderType.")
	}
	if e := s.ModeCheck(key, get); e != nil {
		return paper.Order{}, e
	}
	qty, e := ParseQty(get, m.LotSize)
	if e != nil {
		return paper.Order{}, e
	}
	if typ == "MARKET" && qty.GreaterThan(s.MarketMaxQty(m.Symbol)) {
		return paper.Order{}, Errf(400, -4005, "Quantity greater than max quantity.")
	}
	req := paper.OrderRequest{Market: m.Symbol, Side: paper.Side(side), Type: paper.OrderType(typ), Size: qty,
		ReduceOnly: get("reduceOnly") == "true"}
	ref := m.MarkPrice
	if typ == "STOP_MARKET" || typ == "TAKE_PROFIT_MARKET" {
		// Conditional orders are ordinary orders with stopPrice (fact sheet §0 #5).
		if req.TriggerPrice, e = ParsePrice(get, "stopPrice", m.TickSize); e != nil {
			return paper.Order{}, e
		}
		if Immediate(typ, side, m.MarkPrice, req.TriggerPrice) {
			return paper.Order{}, Errf(400, -2021, "Order would immediately trigger.")
		}
		ref = req.TriggerPrice
	}
	if typ == "LIMIT" {
		if req.Price, e = ParsePrice(get, "price", m.TickSize); e != nil {
			return paper.Order{}, e
		}
		switch get("timeInForce") {
		case "GTC":
		case "GTX":
			req.PostOnly = true
		case "":
			return paper.Order{}, BadParam("timeInForce")
		default:
			return paper.Order{}, Errf(400, -1115, "Invalid timeInForce.")
		}
		ref = req.Price
	}
	if !req.ReduceOnly && qty.Mul(ref).LessThan(m.MinNotional) {
		return paper.Order{}, MinNotional(m)
	}
	if req.ClientOrderID, e = s.ClientID(key, get("newClientOrderId")); e != nil {
		return paper.Order{}, e
	}
	o, err := s.Eng.PlaceOrder(key, req)
	if err != nil {
		return paper.Order{}, PlacementError(err, m)
	}
	return o, nil
}

// clientID checks a client order id (or makes one): the venue's charset and
// length, unique among open orders (the duplicate code is unconfirmed on
// the venue, fact sheet §7: the sim answers Binance's -4116).
func (s *Core) ClientID(key, id string) (string, *APIErr) {
	if id == "" {
		s.mu.Lock()
		s.clientSeq++
		n := s.clientSeq
		s.mu.Unlock()
		return fmt.Sprintf("sim_%d", n), nil
	}
	if !clientIDPattern.MatchString(id) {
		return "", Errf(400, -4015, "Client order id is not valid.")
	}
	if o, err := s.Eng.OrderByClientID(key, id); err == nil && (o.Status == paper.Open || o.Status == paper.Pending) {
		return "", Errf(400, -4116, "ClientOrderId is duplicated.")
	}
	return id, nil
}

func (s *Core) NewOrder(q *Req) (any, *APIErr) {
	o, e := s.Place(q.Key, q.Get)
	if e != nil {
		return nil, e
	}
	return s.respond(q.Get, o), nil
}

func (s *Core) BatchOrders(q *Req) (any, *APIErr) {
	var items []map[string]any
	if err := json.Unmarshal([]byte(q.Get("batchOrders")), &items); err != nil {
		return nil, BadParam("batchOrders")
	}
	if len(items) == 0 || len(items) > 5 {
		return nil, Errf(400, -4082, "Invalid number of batch place orders.")
	}
	out := make([]any, len(items))
	for i, it := range items {
		get := func(name string) string {
			v, ok := it[name]
			if !ok || v == nil {
				return ""
			}
			if s, ok := v.(string); ok {
				return s
			}
			return fmt.Sprint(v)
		}
		o, e := s.Place(q.Key, get)
		if e != nil {
			out[i] = map[string]any{"code": e.Code, "msg": e.Msg}
			continue
		}
		out[i] = s.respond(get, o).numeric()
	}
	return out, nil
}

// lookup finds the account's regular order by orderId or origClientOrderId.
func (s *Core) Lookup(q *Req) (paper.Order, bool, *APIErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return paper.Order{}, false, e
	}
	var o paper.Order
	var err error
	switch {
	case q.Get("orderId") != "":
		n, perr := strconv.ParseInt(q.Get("orderId"), 10, 64)
		if perr != nil {
			return o, false, BadParam("orderId")
		}
		o, err = s.Eng.Order(q.Key, PaperID(n))
	case q.Get("origClientOrderId") != "":
		o, err = s.Eng.OrderByClientID(q.Key, q.Get("origClientOrderId"))
	default:
		return o, false, Errf(400, -1102, "Either orderId or origClientOrderId must be sent.")
	}
	if err != nil || o.Market != m.Symbol || !s.listed(o) {
		return o, false, nil
	}
	return o, true, nil
}

func (s *Core) QueryOrder(q *Req) (any, *APIErr) {
	o, ok, e := s.Lookup(q)
	if e != nil {
		return nil, e
	}
	if !ok {
		return nil, Errf(400, -2013, "Order does not exist.")
	}
	return s.ToWireOrder(o), nil
}

func (s *Core) CancelOrder(q *Req) (any, *APIErr) {
	o, ok, e := s.Lookup(q)
	if e != nil {
		return nil, e
	}
	if !ok || (o.Status != paper.Open && o.Status != paper.Pending) {
		return nil, Errf(400, -2011, "Unknown order sent.")
	}
	c, err := s.Eng.CancelOrder(q.Key, o.ID)
	if err != nil {
		return nil, Errf(400, -2011, "Unknown order sent.")
	}
	return s.Answer(c), nil
}

func (s *Core) CancelAll(q *Req) (any, *APIErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	open, _ := s.Eng.OpenOrders(q.Key, m.Symbol)
	for _, o := range open {
		if s.listed(o) {
			_, _ = s.Eng.CancelOrder(q.Key, o.ID)
		}
	}
	return s.CancelAllDone(), nil
}

func (s *Core) OpenOrders(q *Req) (any, *APIErr) {
	m, e := s.Market(q, false)
	if e != nil {
		return nil, e
	}
	open, err := s.Eng.OpenOrders(q.Key, m.Symbol)
	if err != nil {
		return nil, Errf(500, -1000, "%v", err)
	}
	out := []WireOrder{}
	for _, o := range open {
		if s.listed(o) {
			out = append(out, s.ToWireOrder(o))
		}
	}
	return out, nil
}

func decimals(d decimal.Decimal) int32 { return max(-d.Exponent(), 0) }

func DepthWeight(q *Req) int {
	n, _ := strconv.Atoi(q.Get("limit"))
	if wgt, ok := depthLimits[n]; ok {
		return wgt
	}
	return 5
}

func premium(m paper.MarketInfo, now int64) map[string]any {
	return map[string]any{
		"symbol": m.Symbol, "markPrice": m.MarkPrice.String(), "indexPrice": m.IndexPrice.String(),
		"estimatedSettlePrice": m.IndexPrice.String(), "lastFundingRate": m.FundingRate.String(), "interestRate": "0.00010000",
		"nextFundingTime": m.NextFundingTime.UnixMilli(), "time": now,
	}
}

// placementError maps a paper engine refusal to the venue's code.
func PlacementError(err error, m paper.MarketInfo) *APIErr {
	switch {
	case errors.Is(err, paper.ErrInsufficientMargin):
		return Errf(400, -2019, "Margin is insufficient.")
	case errors.Is(err, paper.ErrPostOnlyWouldCross):
		// What the venue does with a crossing GTX order is unconfirmed (fact
		// sheet §5); the sim answers as Binance does.
		return Errf(400, -5022, "Due to the order could not be executed as maker, the Post Only order will be rejected. The order will not be recorded in the order history")
	case errors.Is(err, paper.ErrReduceOnly):
		return Errf(400, -2022, "ReduceOnly Order is rejected.")
	case errors.Is(err, paper.ErrUnknownMarket):
		return ErrBadSymbol
	case errors.Is(err, paper.ErrInvalidOrder) && strings.Contains(err.Error(), "notional"):
		return MinNotional(m)
	}
	return Errf(400, -2010, "Order was rejected: %v", err)
}

func MinNotional(m paper.MarketInfo) *APIErr {
	return Errf(400, -4164, "Order's notional must be no smaller than %s (unless you choose reduce only).", m.MinNotional)
}

func (s *Core) respond(get OrderFields, o paper.Order) WireOrder {
	if get("newOrderRespType") == "RESULT" {
		return s.Answer(o)
	}
	return s.ack(o)
}

var depthLimits = map[int]int{5: 2, 10: 2, 20: 2, 50: 2, 100: 5, 500: 10, 1000: 20}

var klineMinutes = map[string]int{"1m": 1, "3m": 3, "5m": 5, "15m": 15, "30m": 30, "1h": 60, "2h": 120, "4h": 240, "6h": 360, "8h": 480, "12h": 720, "1d": 1440}

// clientIDPattern is the venue's rule for client order ids.
var clientIDPattern = regexp.MustCompile(`^[.A-Z:/a-z0-9_-]{1,36}$`)

// CancelAllDone is the cancel-all answer, which has no count.
func (s *Core) CancelAllDone() map[string]any {
	return map[string]any{"code": s.opt.CancelAllCode, "msg": "The operation of cancel all open order is done."}
}

// conditional reports whether a type waits for a trigger.
func conditional(typ string) bool {
	switch typ {
	case "STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET", "TRAILING_STOP_MARKET":
		return true
	}
	return false
}

// listed reports whether an order is one of the order endpoints': all of
// them, or with an algo service only limit and market orders.
func (s *Core) listed(o paper.Order) bool {
	return s.opt.Conditional || o.Type == paper.Limit || o.Type == paper.Market
}

// the venue- and Binance-shaped JSON as the simulators write it.
type WireOrder struct {
	OrderID                 any    `json:"orderId"`
	Symbol                  string `json:"symbol"`
	Status                  string `json:"status"`
	ClientOrderID           string `json:"clientOrderId"`
	Price                   string `json:"price"`
	AvgPrice                string `json:"avgPrice,omitempty"` // Query Order and open orders only
	OrigQty                 string `json:"origQty"`
	ExecutedQty             string `json:"executedQty"`
	CumQty                  string `json:"cumQty"`
	CumQuote                string `json:"cumQuote,omitempty"` // Query Order and open orders only
	TimeInForce             string `json:"timeInForce"`
	Type                    string `json:"type"`
	ReduceOnly              bool   `json:"reduceOnly"`
	ClosePosition           bool   `json:"closePosition"`
	Side                    string `json:"side"`
	PositionSide            string `json:"positionSide"`
	StopPrice               string `json:"stopPrice"`
	WorkingType             string `json:"workingType"`
	PriceProtect            bool   `json:"priceProtect"`
	OrigType                string `json:"origType"`
	PriceMatch              string `json:"priceMatch"`
	SelfTradePreventionMode string `json:"selfTradePreventionMode"`
	GoodTillDate            int64  `json:"goodTillDate"`
	Time                    any    `json:"time"`
	UpdateTime              any    `json:"updateTime"`
}

// strings writes the ids and times as strings.
func (w WireOrder) strings() WireOrder {
	for _, f := range []*any{&w.OrderID, &w.Time, &w.UpdateTime} {
		if n, ok := (*f).(int64); ok {
			*f = strconv.FormatInt(n, 10)
		}
	}
	return w
}

// numeric writes the ids and times as numbers, as batch answers do.
func (w WireOrder) numeric() WireOrder {
	for _, f := range []*any{&w.OrderID, &w.Time, &w.UpdateTime} {
		if s, ok := (*f).(string); ok {
			*f, _ = strconv.ParseInt(s, 10, 64)
		}
	}
	return w
}

func VenueID(paperID string) int64 {
	n, _ := strconv.ParseInt(paperID, 10, 64)
	return n + idOffset
}

func PaperID(asterID int64) string { return strconv.FormatInt(asterID-idOffset, 10) }

// orderStatus is the venue's name for a paper order state.
func OrderStatus(o paper.Order) string {
	switch o.Status {
	case paper.Open:
		if o.FilledSize.IsPositive() {
			return "PARTIALLY_FILLED"
		}
		return "NEW"
	case paper.Filled:
		return "FILLED"
	case paper.Cancelled:
		if o.Reason != "" {
			return "EXPIRED"
		}
		return "CANCELED"
	case paper.Rejected:
		return "REJECTED"
	}
	return "NEW"
}

func (s *Core) ToWireOrder(o paper.Order) WireOrder {
	tif := "GTC"
	if o.PostOnly {
		tif = "GTX"
	}
	stop, working := "0", "CONTRACT_PRICE"
	if o.TriggerPrice.IsPositive() {
		stop, working = o.TriggerPrice.String(), "MARK_PRICE"
	}
	w := WireOrder{
		OrderID:                 VenueID(o.ID),
		Symbol:                  o.Market,
		Status:                  OrderStatus(o),
		ClientOrderID:           o.ClientOrderID,
		Price:                   o.Price.String(),
		AvgPrice:                o.AvgFillPrice.String(),
		OrigQty:                 o.Size.String(),
		ExecutedQty:             o.FilledSize.String(),
		CumQty:                  o.FilledSize.String(),
		CumQuote:                o.FilledSize.Mul(o.AvgFillPrice).String(),
		TimeInForce:             tif,
		Type:                    string(o.Type),
		ReduceOnly:              o.ReduceOnly,
		Side:                    string(o.Side),
		PositionSide:            "BOTH",
		StopPrice:               stop,
		WorkingType:             working,
		OrigType:                string(o.Type),
		PriceMatch:              "NONE",
		SelfTradePreventionMode: "EXPIRE_MAKER",
		Time:                    o.CreatedAt.UnixMilli(),
		UpdateTime:              o.UpdatedAt.UnixMilli(),
	}
	if s.opt.StringIDs {
		w = w.strings()
	}
	return w
}

// answer is the order as New Order (RESULT) and Cancel Order return it.
func (s *Core) Answer(o paper.Order) WireOrder {
	w := s.ToWireOrder(o)
	if s.opt.NoResultAverage {
		w.AvgPrice, w.CumQuote = "", ""
	}
	return w
}

// ack is the default (ACK) answer: the order as accepted, before matching.
func (s *Core) ack(o paper.Order) WireOrder {
	w := s.Answer(o)
	w.Status, w.ExecutedQty, w.CumQty = "NEW", "0", "0"
	return w
}

type Filter map[string]any

type WireSymbol struct {
	Symbol            string   `json:"symbol"`
	Pair              string   `json:"pair"`
	ContractType      string   `json:"contractType"`
	DeliveryDate      int64    `json:"deliveryDate"`
	OnboardDate       int64    `json:"onboardDate"`
	Status            string   `json:"status"`
	BaseAsset         string   `json:"baseAsset"`
	QuoteAsset        string   `json:"quoteAsset"`
	MarginAsset       string   `json:"marginAsset"`
	PricePrecision    int32    `json:"pricePrecision"`
	QuantityPrecision int32    `json:"quantityPrecision"`
	UnderlyingType    string   `json:"underlyingType"`
	TriggerProtect    string   `json:"triggerProtect"`
	Filters           []Filter `json:"filters"`
	OrderTypes        []string `json:"orderTypes"`
	TimeInForce       []string `json:"timeInForce"`
}

// RewriteNext passes the next successful answer to method and path
// through f before it is sent, e.g. to answer a read as the venue does when
// its data lags behind.
func (s *Core) RewriteNext(method, path string, f func(body []byte) []byte) {
	s.mu.Lock()
	s.rewrite[method+" "+path] = append(s.rewrite[method+" "+path], f)
	s.mu.Unlock()
}

// SetStatus sets the exchangeInfo status of a symbol (TRADING, SETTLING,
// PENDING_TRADING, ...), as when the venue lists or delists a contract.
func (s *Core) SetStatus(symbol, status string) {
	s.mu.Lock()
	s.status[symbol] = status
	s.mu.Unlock()
}

func (s *Core) symbolStatus(symbol string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.status[symbol]; ok {
		return st
	}
	return "TRADING"
}

// marketMaxQty is the symbol's MARKET_LOT_SIZE maxQty.
func (s *Core) MarketMaxQty(symbol string) decimal.Decimal {
	if q, ok := s.opt.MarketMaxQty[symbol]; ok {
		return q
	}
	return decimal.NewFromInt(1_000_000_000)
}

// SetHedgeMode switches an account between hedge (dual-side) and one-way
// position mode.
func (s *Core) SetHedgeMode(account string, on bool) {
	s.mu.Lock()
	s.hedge[account] = on
	s.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (s *Core) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && s.opt.StreamPath != nil && s.opt.StreamPath(r.URL.Path) {
		s.Streams.Serve(rw, r)
		return
	}
	rt, ok := s.Routes[r.Method+" "+r.URL.Path]
	if !ok {
		s.Write(rw, nil, Errf(404, -1000, "Path %s %s not found.", r.Method, r.URL.Path), 0)
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	rawQuery, rawBody := r.URL.RawQuery, string(raw)
	if r.Method == http.MethodGet {
		rawBody = ""
	}
	vals, err := Merge(rawQuery, rawBody)
	if err != nil {
		s.Write(rw, nil, Errf(400, -1102, "Illegal characters found in parameter."), 0)
		return
	}
	now := s.opt.Now()
	q := &Req{Vals: vals, Now: now}
	s.Hit(r.Method, r.URL.Path)
	s.mu.Lock()
	used, limitErr := s.chargeWeight(now, rt.Weight(q))
	s.mu.Unlock()
	if limitErr != nil {
		s.Write(rw, nil, limitErr, used)
		return
	}
	if rt.Signed {
		if e := s.opt.Auth(r, q, rawQuery, rawBody); e != nil {
			s.Write(rw, nil, e, used)
			return
		}
	}
	if f, ok := s.NextFailure(r.Method, r.URL.Path); ok {
		if f.RetryAfter > 0 {
			rw.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		}
		if f.HTML {
			WriteHTML(rw, f.Status)
			return
		}
		s.Write(rw, nil, &APIErr{Status: f.Status, Code: f.Code, Msg: f.Msg}, used)
		return
	}
	out, e := rt.H(q)
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
	s.Write(rw, out, e, used)
}

func (s *Core) Write(rw http.ResponseWriter, out any, e *APIErr, used int) {
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

// chargeWeight counts a request against the IP's minute budget. Past the
// limit the venue answers 429; an IP that keeps sending is banned with 418
// (fact sheet §10).
func (s *Core) chargeWeight(now time.Time, weight int) (int, *APIErr) {
	if now.Before(s.bannedUntil) {
		return s.weightUsed, Errf(418, -1003, "Way too many requests; IP(127.0.0.1) banned until %d. Please use the websocket for live updates to avoid bans.", s.bannedUntil.UnixMilli())
	}
	minute := now.Unix() / 60
	if minute != s.weightMin {
		s.weightMin, s.weightUsed, s.throttled = minute, 0, false
	}
	if s.throttled {
		s.bannedUntil = now.Add(2 * time.Minute)
		return s.weightUsed, Errf(418, -1003, "Way too many requests; IP(127.0.0.1) banned until %d. Please use the websocket for live updates to avoid bans.", s.bannedUntil.UnixMilli())
	}
	s.weightUsed += weight
	if s.weightUsed > s.opt.WeightLimit {
		s.throttled = true
		return s.weightUsed, Errf(429, -1003, "Too many requests; current limit of IP(127.0.0.1) is %d requests per minute. Please use the websocket for live updates to avoid polling the API.", s.opt.WeightLimit)
	}
	return s.weightUsed, nil
}

// merge reads the query string and the form body; query values win.
func Merge(rawQuery, rawBody string) (url.Values, error) {
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

// writeHTML answers as the venue's front does when its backend fails.
func WriteHTML(rw http.ResponseWriter, status int) {
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.WriteHeader(status)
	_, _ = io.WriteString(rw, "<!DOCTYPE html><html><head><title>We're sorry, but something went wrong (500)</title></head>"+
		"<body><h1>We're sorry, but something went wrong.</h1></body></html>")
}

// Failure is an error the next matching request answers with (FailNext).
type Failure struct {
	Status     int
	Code       int
	Msg        string
	RetryAfter int // seconds, sent as Retry-After when positive
	// HTML answers with the venue's HTML error page instead of JSON (issues
	// #23, #110: "We're sorry, but something went wrong").
	HTML bool
}

// route is one endpoint: its security, IP weight and handler.
type Route struct {
	Signed bool
	Weight func(q *Req) int
	H      func(q *Req) (any, *APIErr)
}

// PositionSideDual is GET positionSide/dual: the account's position mode.
func (s *Core) PositionSideDual(q *Req) (any, *APIErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]bool{"dualSidePosition": s.hedge[q.Key]}, nil
}

// Hedge reports whether the account is in hedge position mode.
func (s *Core) Hedge(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hedge[key]
}

// ModifyOrder is Modify Order (PUT order, Modify).
func (s *Core) ModifyOrder(q *Req) (any, *APIErr) {
	return Modify(s.Eng, q, s.Lookup, func(o paper.Order) any { return s.Answer(o) })
}

// CountdownCancelAll is Auto-Cancel All Open Orders (Countdowns).
func (s *Core) CountdownCancelAll(q *Req) (any, *APIErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	return s.countdowns.Set(s.Eng, q, m)
}

// Income is Get Income History (the Income function).
func (s *Core) Income(q *Req) (any, *APIErr) {
	m, e := s.Market(q, false)
	if e != nil {
		return nil, e
	}
	return Income(s.Eng, s.opt.PageCap, q, m.Symbol)
}

// Leverage is Change Initial Leverage (the Leverage function).
func (s *Core) Leverage(q *Req) (any, *APIErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	return Leverage(s.Eng, q, m, func(err error) *APIErr { return PlacementError(err, m) })
}

// MarginType is Change Margin Type (Margins).
func (s *Core) MarginType(q *Req) (any, *APIErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	return s.margins.Change(s.Eng, q, m)
}

// MarginOf is the account's margin type on sym.
func (s *Core) MarginOf(key, sym string) string { return s.margins.Of(key, sym) }
