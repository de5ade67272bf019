package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// table lists the endpoints with their security and IP weight (fact sheet §4, §11).
func (s *Server) table() map[string]route {
	pub := func(weight func(*req) int, h func(*req) (any, *apiErr)) route { return route{weight: weight, h: h} }
	sig := func(weight func(*req) int, h func(*req) (any, *apiErr)) route {
		return route{signed: true, weight: weight, h: h}
	}
	bySymbol := func(with, without int) func(*req) int {
		return func(q *req) int {
			if q.Get("symbol") != "" {
				return with
			}
			return without
		}
	}
	return map[string]route{
		"GET /fapi/v3/ping":                  pub(w(1), func(*req) (any, *apiErr) { return map[string]any{}, nil }),
		"GET /fapi/v3/time":                  pub(w(1), func(q *req) (any, *apiErr) { return map[string]int64{"serverTime": q.Now.UnixMilli()}, nil }),
		"GET /fapi/v3/exchangeInfo":          pub(w(1), s.exchangeInfo),
		"GET /fapi/v3/depth":                 pub(depthWeight, s.depth),
		"GET /fapi/v3/premiumIndex":          pub(w(1), s.premiumIndex),
		"GET /fapi/v3/klines":                pub(w(2), s.klines),
		"GET /fapi/v3/fundingInfo":           pub(w(1), s.fundingInfo),
		"GET /fapi/v3/commissionRate":        sig(w(20), s.commissionRate),
		"GET /fapi/v3/accountWithJoinMargin": sig(w(5), s.account),
		"GET /fapi/v3/balance":               sig(w(5), s.balance),
		"GET /fapi/v3/positionRisk":          sig(w(5), s.positionRisk),
		"GET /fapi/v3/positionSide/dual": sig(w(30), func(q *req) (any, *apiErr) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return map[string]bool{"dualSidePosition": s.hedge[q.Key]}, nil
		}),
		"GET /fapi/v3/userTrades":          sig(w(5), s.userTrades),
		"GET /fapi/v3/income":              sig(w(30), s.income),
		"GET /fapi/v3/openOrders":          sig(bySymbol(1, 40), s.openOrders),
		"GET /fapi/v3/order":               sig(w(1), s.queryOrder),
		"POST /fapi/v3/order":              sig(w(1), s.newOrder),
		"DELETE /fapi/v3/order":            sig(w(1), s.cancelOrder),
		"PUT /fapi/v3/order":               sig(w(1), s.modifyOrder),
		"POST /fapi/v3/countdownCancelAll": sig(w(10), s.countdownCancelAll),
		"POST /fapi/v3/batchOrders":        sig(w(5), s.batchOrders),
		"DELETE /fapi/v3/allOpenOrders":    sig(w(1), s.cancelAll),
		"POST /fapi/v3/leverage":           sig(w(1), s.leverage),
		"POST /fapi/v3/marginType":         sig(w(1), s.marginType),
		"POST /fapi/v3/listenKey":          sig(w(1), s.newListenKey),
		"PUT /fapi/v3/listenKey":           sig(w(1), s.keepListenKey),
		"DELETE /fapi/v3/listenKey":        sig(w(1), s.closeListenKey),
	}
}

var errBadSymbol = errf(400, -1121, "Invalid symbol.")

// market looks the symbol parameter up; required says whether it must be there.
func (s *Server) market(q *req, required bool) (paper.MarketInfo, *apiErr) {
	sym := q.Get("symbol")
	if sym == "" {
		if required {
			return paper.MarketInfo{}, badParam("symbol")
		}
		return paper.MarketInfo{}, nil
	}
	m, err := s.eng.Market(sym)
	if err != nil || sym != m.Symbol {
		return paper.MarketInfo{}, errBadSymbol
	}
	return m, nil
}

func decimals(d decimal.Decimal) int32 { return max(-d.Exponent(), 0) }

func (s *Server) exchangeInfo(q *req) (any, *apiErr) {
	var syms []wireSymbol
	for _, m := range s.eng.Markets() {
		syms = append(syms, wireSymbol{
			Symbol: m.Symbol, Pair: m.Symbol, ContractType: "PERPETUAL", DeliveryDate: 4133404800000, OnboardDate: 1569398400000,
			Status: s.symbolStatus(m.Symbol), BaseAsset: m.Base, QuoteAsset: m.Quote, MarginAsset: m.Quote,
			PricePrecision: decimals(m.TickSize), QuantityPrecision: decimals(m.LotSize), UnderlyingType: "COIN", TriggerProtect: "0.0500",
			Filters: []filter{
				{"filterType": "PRICE_FILTER", "minPrice": m.TickSize.String(), "maxPrice": "4529764", "tickSize": m.TickSize.String()},
				{"filterType": "LOT_SIZE", "minQty": m.LotSize.String(), "maxQty": "1000000000", "stepSize": m.LotSize.String()},
				{"filterType": "MARKET_LOT_SIZE", "minQty": m.LotSize.String(), "maxQty": s.marketMaxQty(m.Symbol).String(), "stepSize": m.LotSize.String()},
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
	syms = append(syms, wireSymbol{Symbol: "BTCUSDT_261225", Pair: "BTCUSDT", ContractType: "CURRENT_QUARTER", Status: "TRADING",
		BaseAsset: "BTC", QuoteAsset: "USDT", MarginAsset: "USDT", Filters: []filter{{"filterType": "PRICE_FILTER", "tickSize": "0.1"}}})
	return map[string]any{
		"timezone":    "UTC",
		"serverTime":  q.Now.UnixMilli(),
		"futuresType": "U_MARGINED",
		"rateLimits": []map[string]any{
			{"rateLimitType": "REQUEST_WEIGHT", "interval": "MINUTE", "intervalNum": 1, "limit": s.cfg.WeightLimit},
			{"rateLimitType": "ORDERS", "interval": "MINUTE", "intervalNum": 1, "limit": 1200},
			{"rateLimitType": "ORDERS", "interval": "SECOND", "intervalNum": 10, "limit": 300},
		},
		"exchangeFilters": []any{},
		"assets":          []map[string]any{{"asset": "USDT", "marginAvailable": true, "autoAssetExchange": "-10000"}},
		"symbols":         syms,
	}, nil
}

var depthLimits = map[int]int{5: 2, 10: 2, 20: 2, 50: 2, 100: 5, 500: 10, 1000: 20}

func depthWeight(q *req) int {
	n, _ := strconv.Atoi(q.Get("limit"))
	if wgt, ok := depthLimits[n]; ok {
		return wgt
	}
	return 5
}

func (s *Server) depth(q *req) (any, *apiErr) {
	m, e := s.market(q, true)
	if e != nil {
		return nil, e
	}
	limit := 500
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if _, ok := depthLimits[n]; err != nil || !ok {
			return nil, errf(400, -4021, "Invalid depth limit.")
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
	if id, bids, asks, ok := s.streams.Numbered(m.Symbol); ok {
		return map[string]any{"lastUpdateId": id, "E": t, "T": t, "bids": side(bids), "asks": side(asks)}, nil
	}
	b, err := s.eng.Orderbook(m.Symbol, min(limit, 500))
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
	}
	return map[string]any{"lastUpdateId": t, "E": t, "T": t, "bids": side(b.Bids), "asks": side(b.Asks)}, nil
}

func premium(m paper.MarketInfo, now int64) map[string]any {
	return map[string]any{
		"symbol": m.Symbol, "markPrice": m.MarkPrice.String(), "indexPrice": m.IndexPrice.String(),
		"estimatedSettlePrice": m.IndexPrice.String(), "lastFundingRate": m.FundingRate.String(), "interestRate": "0.00010000",
		"nextFundingTime": m.NextFundingTime.UnixMilli(), "time": now,
	}
}

func (s *Server) premiumIndex(q *req) (any, *apiErr) {
	m, e := s.market(q, false)
	if e != nil {
		return nil, e
	}
	if m.Symbol != "" {
		return premium(m, q.Now.UnixMilli()), nil
	}
	var out []map[string]any
	for _, m := range s.eng.Markets() {
		out = append(out, premium(m, q.Now.UnixMilli()))
	}
	return out, nil
}

var klineMinutes = map[string]int{"1m": 1, "3m": 3, "5m": 5, "15m": 15, "30m": 30, "1h": 60, "2h": 120, "4h": 240, "6h": 360, "8h": 480, "12h": 720, "1d": 1440}

func (s *Server) klines(q *req) (any, *apiErr) {
	m, e := s.market(q, true)
	if e != nil {
		return nil, e
	}
	iv, ok := klineMinutes[q.Get("interval")]
	if !ok {
		return nil, errf(400, -1120, "Invalid interval.")
	}
	limit := 500
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1500 {
			return nil, errf(400, -1130, "Data sent for parameter 'limit' is not valid.")
		}
		limit = n
	}
	cs, err := s.eng.Candles(m.Symbol, iv, limit)
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
	}
	out := make([][]any, len(cs))
	for i, c := range cs {
		open := c.Time.UnixMilli()
		out[i] = []any{open, c.Open.String(), c.High.String(), c.Low.String(), c.Close.String(), c.Volume.String(),
			open + int64(iv)*60000 - 1, c.Volume.Mul(c.Close).String(), 100, "0", "0", "0"}
	}
	return out, nil
}

func (s *Server) commissionRate(q *req) (any, *apiErr) {
	m, e := s.market(q, true)
	if e != nil {
		return nil, e
	}
	f := s.eng.Fees()
	bp := decimal.NewFromInt(10000)
	return map[string]any{"symbol": m.Symbol, "makerCommissionRate": f.MakerBps.Div(bp).String(),
		"takerCommissionRate": f.TakerBps.Div(bp).String(), "rpiCommissionRate": "0"}, nil
}

func (s *Server) account(q *req) (any, *apiErr) {
	b, err := s.eng.Balance(q.Key)
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
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

// balance is Futures Account Balance v3 (GET /fapi/v3/balance): one row
// per asset, updateTime as a string as recorded (fact sheet §4 getBalance).
func (s *Server) balance(q *req) (any, *apiErr) {
	b, err := s.eng.Balance(q.Key)
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
	}
	return []map[string]any{{"accountAlias": "SgsR", "asset": "USDT", "balance": b.Wallet.String(),
		"crossWalletBalance": b.Wallet.String(), "crossUnPnl": b.UnrealizedPnL.String(),
		"availableBalance": b.FreeCollateral.String(), "maxWithdrawAmount": b.FreeCollateral.String(),
		"marginAvailable": true, "updateTime": strconv.FormatInt(q.Now.UnixMilli(), 10)}}, nil
}

// positionRisk is Position Information v3: one row per symbol (per side
// in hedge mode), positionAmt 0 where the account holds nothing, with the
// symbol's leverage as a string and marginType in lower case (fact sheet
// §4 getPositions).
func (s *Server) positionRisk(q *req) (any, *apiErr) {
	m, e := s.market(q, false)
	if e != nil {
		return nil, e
	}
	ps, err := s.eng.Positions(q.Key, m.Symbol)
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
	}
	held := map[string]paper.Position{}
	for _, p := range ps {
		held[p.Market] = p
	}
	out := []map[string]any{}
	for _, info := range s.eng.Markets() {
		if m.Symbol != "" && info.Symbol != m.Symbol {
			continue
		}
		p, ok := held[info.Symbol]
		if !ok {
			p = paper.Position{Market: info.Symbol, MarkPrice: info.MarkPrice}
		}
		out = append(out, s.positionRow(q, p))
	}
	return out, nil
}

func (s *Server) positionRow(q *req, p paper.Position) map[string]any {
	amt := p.Size
	if p.Side == paper.Short {
		amt = amt.Neg()
	}
	lev, _ := s.eng.Leverage(q.Key, p.Market)
	mt := "cross"
	if s.marginOf(q.Key, p.Market) == "ISOLATED" {
		mt = "isolated"
	}
	return map[string]any{
		"leverage": strconv.Itoa(lev), "marginType": mt,
		"symbol": p.Market, "positionSide": "BOTH", "positionAmt": amt.String(), "entryPrice": p.EntryPrice.String(),
		"breakEvenPrice": p.EntryPrice.String(), "markPrice": p.MarkPrice.String(), "unRealizedProfit": p.UnrealizedPnL.String(),
		"liquidationPrice": "0", "isolatedMargin": "0", "notional": p.Notional.String(), "marginAsset": "USDT",
		"isolatedWallet": "0", "initialMargin": p.Margin.String(), "maintMargin": "0", "positionInitialMargin": p.Margin.String(),
		"openOrderInitialMargin": "0", "adl": 0, "bidNotional": "0", "askNotional": "0", "updateTime": q.Now.UnixMilli(),
	}
}

func (s *Server) userTrades(q *req) (any, *apiErr) {
	m, e := s.market(q, true)
	if e != nil {
		return nil, e
	}
	limit := 500
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return nil, errf(400, -1130, "Data sent for parameter 'limit' is not valid.")
		}
		limit = n
	}
	var wantOrder string
	if v := q.Get("orderId"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, badParam("orderId")
		}
		wantOrder = paperID(n)
	}
	fills, err := s.eng.Fills(q.Key, m.Symbol, 10000)
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
	}
	var picked []paper.Fill // newest first
	for _, f := range fills {
		if (wantOrder == "" || f.OrderID == wantOrder) && len(picked) < limit {
			picked = append(picked, f)
		}
	}
	out := make([]map[string]any, 0, len(picked))
	for i := len(picked) - 1; i >= 0; i-- { // Aster answers oldest first
		f := picked[i]
		id, _ := strconv.ParseInt(f.ID, 10, 64)
		out = append(out, map[string]any{
			"symbol": f.Market, "id": id, "orderId": asterID(f.OrderID), "side": string(f.Side), "price": f.Price.String(),
			"qty": f.Size.String(), "realizedPnl": f.RealizedPnL.String(), "quoteQty": f.Size.Mul(f.Price).String(),
			"commission": f.Fee.String(), "commissionAsset": "USDT", "time": f.Time.UnixMilli(), "positionSide": "BOTH",
			"buyer": f.Side == paper.Buy, "maker": f.Liquidity == paper.Maker,
		})
	}
	return out, nil
}

// clientIDPattern is Aster's rule for client order ids.
var clientIDPattern = regexp.MustCompile(`^[.A-Z:/a-z0-9_-]{1,36}$`)

// placementError maps a paper engine refusal to Aster's code.
func placementError(err error, m paper.MarketInfo) *apiErr {
	switch {
	case errors.Is(err, paper.ErrInsufficientMargin):
		return errf(400, -2019, "Margin is insufficient.")
	case errors.Is(err, paper.ErrPostOnlyWouldCross):
		// What Aster does with a crossing GTX order is unconfirmed (fact
		// sheet §5); the sim answers as Binance does.
		return errf(400, -5022, "Due to the order could not be executed as maker, the Post Only order will be rejected. The order will not be recorded in the order history")
	case errors.Is(err, paper.ErrReduceOnly):
		return errf(400, -2022, "ReduceOnly Order is rejected.")
	case errors.Is(err, paper.ErrUnknownMarket):
		return errBadSymbol
	case errors.Is(err, paper.ErrInvalidOrder) && strings.Contains(err.Error(), "notional"):
		return minNotional(m)
	}
	return errf(400, -2010, "Order was rejected: %v", err)
}

func minNotional(m paper.MarketInfo) *apiErr {
	return errf(400, -4164, "Order's notional must be no smaller than %s (unless you choose reduce only).", m.MinNotional)
}

func (s *Server) modeCheck(key string, get orderFields) *apiErr {
	s.mu.Lock()
	hedge := s.hedge[key]
	s.mu.Unlock()
	ps := get("positionSide")
	if hedge && (ps == "" || ps == "BOTH") || !hedge && ps != "" && ps != "BOTH" {
		return errf(400, -4061, "Order's position side does not match user's setting.")
	}
	if hedge && get("reduceOnly") != "" {
		return errf(400, -1106, "Parameter 'reduceonly' sent when not required.")
	}
	if hedge {
		return errf(400, -1000, "The simulator does not model hedge-mode positions.")
	}
	return nil
}

// place runs New Order's checks and places the order in the engine.
func (s *Server) place(key string, get orderFields) (paper.Order, *apiErr) {
	m, err := s.eng.Market(get("symbol"))
	if get("symbol") == "" {
		return paper.Order{}, badParam("symbol")
	}
	if err != nil || m.Symbol != get("symbol") {
		return paper.Order{}, errBadSymbol
	}
	side := get("side")
	if side != "BUY" && side != "SELL" {
		return paper.Order{}, errf(400, -1117, "Invalid side.")
	}
	typ := get("type")
	switch typ {
	case "LIMIT", "MARKET", "STOP_MARKET", "TAKE_PROFIT_MARKET":
	case "STOP", "TAKE_PROFIT", "TRAILING_STOP_MARKET":
		return paper.Order{}, errf(400, -1116, "Invalid orderType (the simulator has no %s orders).", typ)
	default:
		return paper.Order{}, errf(400, -1116, "Invalid orderType.")
	}
	if e := s.modeCheck(key, get); e != nil {
		return paper.Order{}, e
	}
	qty, e := parseQty(get, m.LotSize)
	if e != nil {
		return paper.Order{}, e
	}
	if typ == "MARKET" && qty.GreaterThan(s.marketMaxQty(m.Symbol)) {
		return paper.Order{}, errf(400, -4005, "Quantity greater than max quantity.")
	}
	req := paper.OrderRequest{Market: m.Symbol, Side: paper.Side(side), Type: paper.OrderType(typ), Size: qty,
		ReduceOnly: get("reduceOnly") == "true"}
	ref := m.MarkPrice
	if typ == "STOP_MARKET" || typ == "TAKE_PROFIT_MARKET" {
		// Conditional orders are ordinary orders with stopPrice (fact sheet §0 #5).
		if req.TriggerPrice, e = parsePrice(get, "stopPrice", m.TickSize); e != nil {
			return paper.Order{}, e
		}
		if immediate(typ, side, m.MarkPrice, req.TriggerPrice) {
			return paper.Order{}, errf(400, -2021, "Order would immediately trigger.")
		}
		ref = req.TriggerPrice
	}
	if typ == "LIMIT" {
		if req.Price, e = parsePrice(get, "price", m.TickSize); e != nil {
			return paper.Order{}, e
		}
		switch get("timeInForce") {
		case "GTC":
		case "GTX":
			req.PostOnly = true
		case "":
			return paper.Order{}, badParam("timeInForce")
		default:
			return paper.Order{}, errf(400, -1115, "Invalid timeInForce.")
		}
		ref = req.Price
	}
	if !req.ReduceOnly && qty.Mul(ref).LessThan(m.MinNotional) {
		return paper.Order{}, minNotional(m)
	}
	if req.ClientOrderID, e = s.clientID(key, get("newClientOrderId")); e != nil {
		return paper.Order{}, e
	}
	o, err := s.eng.PlaceOrder(key, req)
	if err != nil {
		return paper.Order{}, placementError(err, m)
	}
	return o, nil
}

// clientID checks a client order id (or makes one): Aster's charset and
// length, unique among open orders (the duplicate code is unconfirmed on
// Aster, fact sheet §7: the sim answers Binance's -4116).
func (s *Server) clientID(key, id string) (string, *apiErr) {
	if id == "" {
		s.mu.Lock()
		s.clientSeq++
		n := s.clientSeq
		s.mu.Unlock()
		return fmt.Sprintf("sim_%d", n), nil
	}
	if !clientIDPattern.MatchString(id) {
		return "", errf(400, -4015, "Client order id is not valid.")
	}
	if o, err := s.eng.OrderByClientID(key, id); err == nil && (o.Status == paper.Open || o.Status == paper.Pending) {
		return "", errf(400, -4116, "ClientOrderId is duplicated.")
	}
	return id, nil
}

func respond(get orderFields, o paper.Order) wireOrder {
	if get("newOrderRespType") == "RESULT" {
		return answer(o)
	}
	return ack(o)
}

func (s *Server) newOrder(q *req) (any, *apiErr) {
	o, e := s.place(q.Key, q.Get)
	if e != nil {
		return nil, e
	}
	return respond(q.Get, o), nil
}

func (s *Server) batchOrders(q *req) (any, *apiErr) {
	var items []map[string]any
	if err := json.Unmarshal([]byte(q.Get("batchOrders")), &items); err != nil {
		return nil, badParam("batchOrders")
	}
	if len(items) == 0 || len(items) > 5 {
		return nil, errf(400, -4082, "Invalid number of batch place orders.")
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
		o, e := s.place(q.Key, get)
		if e != nil {
			out[i] = map[string]any{"code": e.Code, "msg": e.Msg}
			continue
		}
		out[i] = respond(get, o).numeric()
	}
	return out, nil
}

// lookup finds the account's regular order by orderId or origClientOrderId.
func (s *Server) lookup(q *req) (paper.Order, bool, *apiErr) {
	m, e := s.market(q, true)
	if e != nil {
		return paper.Order{}, false, e
	}
	var o paper.Order
	var err error
	switch {
	case q.Get("orderId") != "":
		n, perr := strconv.ParseInt(q.Get("orderId"), 10, 64)
		if perr != nil {
			return o, false, badParam("orderId")
		}
		o, err = s.eng.Order(q.Key, paperID(n))
	case q.Get("origClientOrderId") != "":
		o, err = s.eng.OrderByClientID(q.Key, q.Get("origClientOrderId"))
	default:
		return o, false, errf(400, -1102, "Either orderId or origClientOrderId must be sent.")
	}
	if err != nil || o.Market != m.Symbol {
		return o, false, nil
	}
	return o, true, nil
}

func (s *Server) queryOrder(q *req) (any, *apiErr) {
	o, ok, e := s.lookup(q)
	if e != nil {
		return nil, e
	}
	if !ok {
		return nil, errf(400, -2013, "Order does not exist.")
	}
	return toWireOrder(o), nil
}

func (s *Server) cancelOrder(q *req) (any, *apiErr) {
	o, ok, e := s.lookup(q)
	if e != nil {
		return nil, e
	}
	if !ok || (o.Status != paper.Open && o.Status != paper.Pending) {
		return nil, errf(400, -2011, "Unknown order sent.")
	}
	c, err := s.eng.CancelOrder(q.Key, o.ID)
	if err != nil {
		return nil, errf(400, -2011, "Unknown order sent.")
	}
	return answer(c), nil
}

// cancelAllDone is the recorded answer, code a string (fact sheet §4).
var cancelAllDone = map[string]any{"code": "200", "msg": "The operation of cancel all open order is done."}

func (s *Server) cancelAll(q *req) (any, *apiErr) {
	m, e := s.market(q, true)
	if e != nil {
		return nil, e
	}
	open, _ := s.eng.OpenOrders(q.Key, m.Symbol)
	for _, o := range open {
		_, _ = s.eng.CancelOrder(q.Key, o.ID)
	}
	return cancelAllDone, nil
}

func (s *Server) openOrders(q *req) (any, *apiErr) {
	m, e := s.market(q, false)
	if e != nil {
		return nil, e
	}
	open, err := s.eng.OpenOrders(q.Key, m.Symbol)
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
	}
	out := []wireOrder{}
	for _, o := range open {
		out = append(out, toWireOrder(o))
	}
	return out, nil
}

// fundingInfo is GET /fapi/v3/fundingInfo: every symbol with its cap,
// floor and fundingIntervalHours (8 unless configured; fact sheet §4).
func (s *Server) fundingInfo(q *req) (any, *apiErr) {
	out := []map[string]any{}
	for _, m := range s.eng.Markets() {
		h, ok := s.cfg.FundingHours[m.Symbol]
		if !ok {
			h = 8
		}
		out = append(out, map[string]any{"symbol": m.Symbol, "interestRate": "0.00010000", "time": q.Now.UnixMilli(),
			"fundingIntervalHours": h, "fundingFeeCap": nil, "fundingFeeFloor": nil})
	}
	return out, nil
}
