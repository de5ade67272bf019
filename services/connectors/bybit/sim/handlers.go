package sim

import (
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// table lists the endpoints (docs/v5 pages named at each handler).
func (s *Server) table() map[string]route {
	pub := func(h func(*req) (any, *apiErr)) route { return route{h: h} }
	sig := func(h func(*req) (any, *apiErr)) route { return route{signed: true, h: h} }
	t := map[string]route{
		"GET /v5/market/time":              pub(s.serverTime),
		"GET /v5/market/instruments-info":  pub(s.instruments),
		"GET /v5/market/orderbook":         pub(s.orderbook),
		"GET /v5/market/tickers":           pub(s.tickers),
		"GET /v5/market/kline":             pub(s.kline),
		"GET /v5/account/wallet-balance":   sig(s.wallet),
		"GET /v5/account/info":             sig(s.accountInfo),
		"POST /v5/account/set-margin-mode": sig(s.setMarginMode),
		"GET /v5/position/list":            sig(s.positions),
		"POST /v5/position/set-leverage":   sig(s.setLeverage),
		"GET /v5/order/realtime":           sig(func(q *req) (any, *apiErr) { return s.listOrders(q, true) }),
		"GET /v5/order/history":            sig(func(q *req) (any, *apiErr) { return s.listOrders(q, false) }),
		"GET /v5/execution/list":           sig(s.executions),
		"GET /v5/account/transaction-log":  sig(s.transactionLog),
		"POST /v5/order/create":            sig(s.create),
		"POST /v5/order/create-batch":      sig(s.createBatch),
		"POST /v5/order/cancel":            sig(s.cancel),
		"POST /v5/order/amend":             sig(s.amend),
		"POST /v5/order/cancel-all":        sig(s.cancelAll),
	}
	if !s.cfg.Demo { // the demo host serves neither (demo page)
		t["GET /v5/account/fee-rate"] = sig(s.feeRate)
		t["GET /v5/user/query-api"] = sig(s.apiKeyInfo)
	}
	return t
}

// market/time
func (s *Server) serverTime(q *req) (any, *apiErr) {
	return map[string]string{"timeSecond": strconv.FormatInt(q.now.Unix(), 10), "timeNano": strconv.FormatInt(q.now.UnixNano(), 10)}, nil
}

func checkCategory(c string) *apiErr {
	if c != "linear" {
		return errf(10001, "params error: category only support linear here")
	}
	return nil
}

func (s *Server) market(sym string) (paper.MarketInfo, *apiErr) {
	if sym == "" {
		return paper.MarketInfo{}, errf(10001, "params error: symbol is required")
	}
	m, err := s.eng.Market(sym)
	if err != nil || m.Symbol != sym {
		return paper.MarketInfo{}, errf(10001, "params error: symbol invalid")
	}
	return m, nil
}

func (s *Server) maxMarketQty(sym string) decimal.Decimal {
	if q, ok := s.cfg.MaxMarketQty[sym]; ok {
		return q
	}
	return decimal.NewFromInt(1_000_000)
}

// market/instrument: category linear lists USDT and USDC perpetuals and
// dated futures alike; limit 1-1000 (default 500), cursor pagination.
func (s *Server) instruments(q *req) (any, *apiErr) {
	if e := checkCategory(q.get("category")); e != nil {
		return nil, e
	}
	var rows []map[string]any
	for _, m := range s.eng.Markets() {
		rows = append(rows, instrumentRow(m.Symbol, "LinearPerpetual", m.Base, "USDT", m.TickSize, m.LotSize, m.MinNotional,
			s.maxMarketQty(m.Symbol), m.MaxLeverage))
	}
	d := decimal.RequireFromString
	rows = append(rows,
		instrumentRow("BTCPERP", "LinearPerpetual", "BTC", "USDC", d("0.5"), d("0.001"), d("1"), d("100"), 100),
		instrumentRow("BTCUSDT-26DEC25", "LinearFutures", "BTC", "USDT", d("0.5"), d("0.001"), d("5"), d("100"), 50))
	limit, e := q.limit(500, 1000)
	if e != nil {
		return nil, e
	}
	start, _ := strconv.Atoi(q.get("cursor"))
	start = min(max(start, 0), len(rows))
	end := min(start+limit, len(rows))
	next := ""
	if end < len(rows) {
		next = strconv.Itoa(end)
	}
	return map[string]any{"category": "linear", "list": rows[start:end], "nextPageCursor": next}, nil
}

func instrumentRow(sym, contract, base, settle string, tick, lot, minNotional, maxMkt decimal.Decimal, maxLev int) map[string]any {
	return map[string]any{
		"symbol": sym, "contractType": contract, "status": "Trading", "baseCoin": base, "quoteCoin": settle, "settleCoin": settle,
		"launchTime": "1585526400000", "deliveryTime": "0", "deliveryFeeRate": "", "priceScale": strconv.Itoa(int(max(-tick.Exponent(), 0))),
		"leverageFilter": map[string]string{"minLeverage": "1", "maxLeverage": strconv.Itoa(maxLev) + ".00", "leverageStep": "0.01"},
		"priceFilter":    map[string]string{"minPrice": tick.String(), "maxPrice": "1999999.80", "tickSize": tick.String()},
		"lotSizeFilter": map[string]string{"maxOrderQty": "1190.000", "minOrderQty": lot.String(), "qtyStep": lot.String(),
			"maxMktOrderQty": maxMkt.String(), "minNotionalValue": minNotional.String(), "postOnlyMaxOrderQty": "1190.000"},
		"unifiedMarginTrade": true, "fundingInterval": 480, "copyTrading": "both",
		"upperFundingRate": "0.00375", "lowerFundingRate": "-0.00375", "isPreListing": false,
	}
}

func levels(ls []paper.Level) [][2]string {
	out := make([][2]string, len(ls))
	for i, l := range ls {
		out[i] = [2]string{l.Price.String(), l.Size.String()}
	}
	return out
}

// market/orderbook: limit 1-1000 for linear (default 25).
func (s *Server) orderbook(q *req) (any, *apiErr) {
	if e := checkCategory(q.get("category")); e != nil {
		return nil, e
	}
	m, e := s.market(q.get("symbol"))
	if e != nil {
		return nil, e
	}
	limit, e := q.limit(25, 1000)
	if e != nil {
		return nil, e
	}
	t := q.now.UnixMilli()
	// While a book stream runs, its numbered book is the answer, so a
	// client can line the stream's u up with this one.
	if nb, ok := s.numbered(m.Symbol); ok {
		return map[string]any{"s": m.Symbol, "b": levels(nb.bids[:min(limit, len(nb.bids))]), "a": levels(nb.asks[:min(limit, len(nb.asks))]),
			"ts": t, "u": nb.u, "seq": nb.u, "cts": t}, nil
	}
	b, err := s.eng.Orderbook(m.Symbol, min(limit, 500))
	if err != nil {
		return nil, errf(10016, "%v", err)
	}
	return map[string]any{"s": m.Symbol, "b": levels(b.Bids), "a": levels(b.Asks), "ts": t, "u": t, "seq": t, "cts": t}, nil
}

func tickerRow(m paper.MarketInfo) map[string]string {
	return map[string]string{
		"symbol": m.Symbol, "lastPrice": m.MarkPrice.String(), "indexPrice": m.IndexPrice.String(), "markPrice": m.MarkPrice.String(),
		"prevPrice24h": m.MarkPrice.String(), "price24hPcnt": "0", "highPrice24h": m.MarkPrice.String(), "lowPrice24h": m.MarkPrice.String(),
		"openInterest": m.OpenInterest.String(), "openInterestValue": m.OpenInterest.Mul(m.MarkPrice).String(),
		"turnover24h": "0", "volume24h": "0", "fundingRate": m.FundingRate.String(),
		"nextFundingTime": strconv.FormatInt(m.NextFundingTime.UnixMilli(), 10), "fundingIntervalHour": "8", "fundingCap": "0.005",
		"bid1Price": m.MarkPrice.String(), "bid1Size": "1", "ask1Price": m.MarkPrice.String(), "ask1Size": "1",
	}
}

// market/tickers: one symbol, or every linear ticker without it.
func (s *Server) tickers(q *req) (any, *apiErr) {
	if e := checkCategory(q.get("category")); e != nil {
		return nil, e
	}
	var list []map[string]string
	if sym := q.get("symbol"); sym != "" {
		m, e := s.market(sym)
		if e != nil {
			return nil, e
		}
		list = append(list, tickerRow(m))
	} else {
		for _, m := range s.eng.Markets() {
			list = append(list, tickerRow(m))
		}
	}
	return map[string]any{"category": "linear", "list": list}, nil
}

var klineMinutes = map[string]int{"1": 1, "3": 3, "5": 5, "15": 15, "30": 30, "60": 60, "120": 120, "240": 240, "360": 360, "720": 720, "D": 1440}

// market/kline: rows newest first, [start, open, high, low, close,
// volume, turnover], limit 1-1000 (default 200).
func (s *Server) kline(q *req) (any, *apiErr) {
	if e := checkCategory(q.get("category")); e != nil {
		return nil, e
	}
	m, e := s.market(q.get("symbol"))
	if e != nil {
		return nil, e
	}
	iv, ok := klineMinutes[q.get("interval")]
	if !ok {
		return nil, errf(10001, "params error: interval invalid")
	}
	limit, e := q.limit(200, 1000)
	if e != nil {
		return nil, e
	}
	cs, err := s.eng.Candles(m.Symbol, iv, min(limit, 1000))
	if err != nil {
		return nil, errf(10001, "%v", err)
	}
	rows := make([][]string, 0, len(cs))
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		rows = append(rows, []string{strconv.FormatInt(c.Time.UnixMilli(), 10), c.Open.String(), c.High.String(), c.Low.String(),
			c.Close.String(), c.Volume.String(), c.Volume.Mul(c.Close).String()})
	}
	return map[string]any{"category": "linear", "symbol": m.Symbol, "list": rows}, nil
}

// account/fee-rate
func (s *Server) feeRate(q *req) (any, *apiErr) {
	if e := checkCategory(q.get("category")); e != nil {
		return nil, e
	}
	f := s.eng.Fees()
	rate := func(bps decimal.Decimal) string { return bps.Div(decimal.NewFromInt(10000)).String() }
	var list []map[string]string
	for _, m := range s.eng.Markets() {
		if sym := q.get("symbol"); sym == "" || sym == m.Symbol {
			list = append(list, map[string]string{"symbol": m.Symbol, "baseCoin": "", "takerFeeRate": rate(f.TakerBps), "makerFeeRate": rate(f.MakerBps)})
		}
	}
	return map[string]any{"list": list}, nil
}

// user/apikey-info
func (s *Server) apiKeyInfo(q *req) (any, *apiErr) {
	return map[string]any{"id": "13770661", "note": "perpgate", "apiKey": q.key, "readOnly": 0, "secret": "",
		"permissions": map[string][]string{"ContractTrade": {"Order", "Position"}, "Wallet": {"AccountTransfer"}},
		"ips":         []string{"*"}, "type": 1, "deadlineDay": 83, "expiredAt": "2027-01-01T00:00:00Z", "createdAt": "2026-01-01T00:00:00Z",
		"unified": 0, "uta": 1, "userID": 24617703, "inviterID": 0, "vipLevel": "No VIP", "mktMakerLevel": "0", "affiliateID": 0,
		"isMaster": true, "parentUid": "0", "kycLevel": "LEVEL_DEFAULT", "kycRegion": ""}, nil
}

// account/wallet-balance: accountType UNIFIED.
func (s *Server) wallet(q *req) (any, *apiErr) {
	if q.get("accountType") != "UNIFIED" {
		return nil, errf(10001, "accountType only support UNIFIED.")
	}
	b, err := s.eng.Balance(q.key)
	if err != nil {
		return nil, errf(10016, "%v", err)
	}
	row := walletRow(b)
	return map[string]any{"list": []map[string]any{row}}, nil
}

// walletRow is the unified account's row, as the wallet-balance answer
// and the wallet topic carry it.
func walletRow(b paper.Balance) map[string]any {
	im := b.PositionMargin.Add(b.OrderMargin)
	coin := map[string]any{"coin": "USDT", "equity": b.Equity.String(), "usdValue": b.Equity.String(), "walletBalance": b.Wallet.String(),
		"unrealisedPnl": b.UnrealizedPnL.String(), "totalPositionIM": b.PositionMargin.String(), "totalOrderIM": b.OrderMargin.String(),
		"locked": "0", "bonus": "0", "availableToWithdraw": "", "marginCollateral": true, "collateralSwitch": true}
	return map[string]any{
		"accountType": "UNIFIED", "totalEquity": b.Equity.String(), "totalWalletBalance": b.Wallet.String(),
		"totalMarginBalance": b.Equity.String(), "totalAvailableBalance": b.FreeCollateral.String(), "totalPerpUPL": b.UnrealizedPnL.String(),
		"totalInitialMargin": im.String(), "totalMaintenanceMargin": "0", "accountIMRate": "0", "accountMMRate": "0", "accountLTV": "0",
		"coin": []map[string]any{coin},
	}
}

// account/account-info
func (s *Server) accountInfo(q *req) (any, *apiErr) {
	return map[string]any{"unifiedMarginStatus": 5, "marginMode": s.MarginMode(q.key), "isMasterTrader": false,
		"spotHedgingStatus": "OFF", "updatedTime": strconv.FormatInt(q.now.UnixMilli(), 10), "dcpStatus": "OFF", "timeWindow": 10, "smpGroup": 0}, nil
}

// account/set-margin-mode
func (s *Server) setMarginMode(q *req) (any, *apiErr) {
	var b struct {
		SetMarginMode string `json:"setMarginMode"`
	}
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	switch b.SetMarginMode {
	case "REGULAR_MARGIN", "ISOLATED_MARGIN", "PORTFOLIO_MARGIN":
	default:
		return nil, errf(10001, "params error: setMarginMode invalid")
	}
	s.SetMarginMode(q.key, b.SetMarginMode)
	return map[string]any{"reasons": []any{}}, nil
}

func positionRow(sym string, idx int, p *paper.Position, lev int, now time.Time) map[string]any {
	row := map[string]any{"positionIdx": idx, "riskId": 1, "riskLimitValue": "2000000", "symbol": sym, "side": "", "size": "0",
		"avgPrice": "0", "positionValue": "0", "tradeMode": 0, "autoAddMargin": 0, "positionStatus": "Normal",
		"leverage": strconv.Itoa(lev), "markPrice": "0", "liqPrice": "", "bustPrice": "", "positionIM": "0", "positionMM": "0",
		"tpslMode": "Full", "takeProfit": "0.00", "stopLoss": "0.00", "trailingStop": "0.00", "unrealisedPnl": "0",
		"curRealisedPnl": "0", "cumRealisedPnl": "0", "adlRankIndicator": 0, "isReduceOnly": false,
		"createdTime": strconv.FormatInt(now.UnixMilli(), 10), "updatedTime": strconv.FormatInt(now.UnixMilli(), 10), "seq": now.UnixMilli()}
	if p != nil {
		side := "Buy"
		if p.Side == paper.Short {
			side = "Sell"
		}
		row["side"], row["size"], row["avgPrice"], row["positionValue"] = side, p.Size.String(), p.EntryPrice.String(), p.Notional.String()
		row["markPrice"], row["unrealisedPnl"], row["positionIM"] = p.MarkPrice.String(), p.UnrealizedPnL.String(), p.Margin.String()
	}
	return row
}

// position (position list): symbol, or settleCoin for every non-zero
// position; with a symbol a flat position is still one row. Hedge mode
// shows two rows, positionIdx 1 (buy side) and 2 (sell side).
func (s *Server) positions(q *req) (any, *apiErr) {
	if e := checkCategory(q.get("category")); e != nil {
		return nil, e
	}
	sym, settle := q.get("symbol"), q.get("settleCoin")
	if sym == "" && settle == "" && q.get("baseCoin") == "" {
		return nil, errf(10001, "params error: symbol or settleCoin is required")
	}
	s.mu.Lock()
	hedge := s.hedge[q.key]
	s.mu.Unlock()
	var list []map[string]any
	var syms []string
	if sym != "" {
		m, e := s.market(sym)
		if e != nil {
			return nil, e
		}
		syms = []string{m.Symbol}
	} else {
		syms = s.eng.MarketSymbols()
	}
	for _, symbol := range syms {
		ps, _ := s.eng.Positions(q.key, symbol)
		lev, _ := s.eng.Leverage(q.key, symbol)
		var p *paper.Position
		if len(ps) > 0 {
			p = &ps[0]
		}
		switch {
		case hedge:
			list = append(list, positionRow(symbol, 1, nil, lev, q.now), positionRow(symbol, 2, nil, lev, q.now))
		case p != nil || sym != "":
			list = append(list, positionRow(symbol, 0, p, lev, q.now))
		}
	}
	return map[string]any{"category": "linear", "list": list, "nextPageCursor": ""}, nil
}

// position/leverage: buy and sell leverage equal in one-way mode; 110043
// when unchanged.
func (s *Server) setLeverage(q *req) (any, *apiErr) {
	var b struct {
		Category, Symbol, BuyLeverage, SellLeverage string
	}
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	if e := checkCategory(b.Category); e != nil {
		return nil, e
	}
	m, e := s.market(b.Symbol)
	if e != nil {
		return nil, e
	}
	if b.BuyLeverage != b.SellLeverage {
		return nil, errf(10001, "params error: buy leverage must equal sell leverage in one-way mode")
	}
	lev, err := decimal.NewFromString(b.BuyLeverage)
	if err != nil || !lev.IsInteger() || lev.IntPart() < 1 || lev.IntPart() > int64(m.MaxLeverage) {
		return nil, errf(10001, "params error: leverage invalid")
	}
	if cur, _ := s.eng.Leverage(q.key, m.Symbol); int64(cur) == lev.IntPart() {
		return nil, errf(110043, "Set leverage not modified")
	}
	if _, err := s.eng.SetLeverage(q.key, m.Symbol, int(lev.IntPart())); err != nil {
		if errors.Is(err, paper.ErrInsufficientMargin) {
			return nil, errf(110012, "Insufficient available balance.")
		}
		return nil, errf(110013, "Cannot set leverage due to risk limit level.")
	}
	return map[string]any{}, nil
}

// bybitOrder is what the simulator keeps beside a paper order: Bybit's id
// and the fields the engine does not know.
type bybitOrder struct {
	ID, Key, PaperID, Symbol string
	OrderType, TimeInForce   string
	TriggerDirection         int
	TriggerBy                string
	CloseOnTrigger           bool
	RejectReason             string
	Created                  time.Time
	frozen                   *paper.Order // an order the engine never took (post-only that would take)
}

// createBody is POST /v5/order/create's body (order/create-order).
type createBody struct {
	Category         string `json:"category"`
	Symbol           string `json:"symbol"`
	Side             string `json:"side"`
	OrderType        string `json:"orderType"`
	Qty              string `json:"qty"`
	Price            string `json:"price"`
	TimeInForce      string `json:"timeInForce"`
	OrderLinkID      string `json:"orderLinkId"`
	TriggerPrice     string `json:"triggerPrice"`
	TriggerDirection int    `json:"triggerDirection"`
	TriggerBy        string `json:"triggerBy"`
	ReduceOnly       bool   `json:"reduceOnly"`
	CloseOnTrigger   bool   `json:"closeOnTrigger"`
	PositionIdx      int    `json:"positionIdx"`
}

var linkPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,36}$`)

// order/create-order: an acknowledgement with orderId and orderLinkId.
func (s *Server) create(q *req) (any, *apiErr) {
	var b createBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	o, e := s.place(q, b)
	if e != nil {
		return nil, e
	}
	return map[string]string{"orderId": o.ID, "orderLinkId": b.OrderLinkID}, nil
}

func (s *Server) place(q *req, b createBody) (*bybitOrder, *apiErr) {
	if b.Category == "" {
		b.Category = "linear"
	}
	if e := checkCategory(b.Category); e != nil {
		return nil, e
	}
	m, e := s.market(b.Symbol)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	hedge := s.hedge[q.key]
	s.mu.Unlock()
	if hedge != (b.PositionIdx != 0) {
		return nil, errf(10001, "position idx not match position mode")
	}
	if b.OrderLinkID != "" {
		if !linkPattern.MatchString(b.OrderLinkID) {
			return nil, errf(10001, "params error: orderLinkId invalid")
		}
		if s.findLink(q.key, b.OrderLinkID) != nil {
			return nil, errf(110072, "OrderLinkedID is duplicate")
		}
	}
	side := paper.Buy
	switch b.Side {
	case "Buy":
	case "Sell":
		side = paper.Sell
	default:
		return nil, errf(10001, "params error: side invalid")
	}
	qty, err := decimal.NewFromString(b.Qty)
	if err != nil || !qty.IsPositive() {
		return nil, errf(10001, "params error: qty invalid")
	}
	r := paper.OrderRequest{Market: m.Symbol, Side: side, Size: qty, ReduceOnly: b.ReduceOnly, ClientOrderID: b.OrderLinkID}
	tif := b.TimeInForce
	switch {
	case b.TriggerPrice != "":
		trigger, err := decimal.NewFromString(b.TriggerPrice)
		if err != nil || !trigger.IsPositive() || b.OrderType != "Market" {
			return nil, errf(10001, "params error: triggerPrice invalid (the simulator takes conditional market orders)")
		}
		// The simulator triggers on the mark price whatever triggerBy says.
		mark := m.MarkPrice
		switch b.TriggerDirection {
		case 1:
			if !trigger.GreaterThan(mark) {
				return nil, errf(110092, "expect Rising, but trigger_price[%s] <= current[%s]", trigger, mark)
			}
		case 2:
			if !trigger.LessThan(mark) {
				return nil, errf(110093, "expect Falling, but trigger_price[%s] >= current[%s]", trigger, mark)
			}
		default:
			return nil, errf(10001, "params error: TriggerDirection invalid")
		}
		r.TriggerPrice = trigger
		r.Type = paper.StopMarket // a sell falling or a buy rising to its trigger
		if (side == paper.Sell) == (b.TriggerDirection == 1) {
			r.Type = paper.TakeProfitMarket
		}
		tif = "IOC"
	case b.OrderType == "Limit":
		price, err := decimal.NewFromString(b.Price)
		if err != nil || !price.IsPositive() {
			return nil, errf(10001, "params error: price invalid")
		}
		r.Type, r.Price = paper.Limit, price
		switch tif {
		case "", "GTC":
			tif = "GTC"
		case "PostOnly":
			r.PostOnly = true
		default:
			return nil, errf(10001, "params error: the simulator takes timeInForce GTC or PostOnly")
		}
	case b.OrderType == "Market":
		r.Type, tif = paper.Market, "IOC"
		if qty.GreaterThan(s.maxMarketQty(m.Symbol)) {
			return nil, errf(10001, "The quantity of a single order has exceeded the maximum allowed.")
		}
	default:
		return nil, errf(10001, "params error: orderType invalid")
	}
	bo := &bybitOrder{ID: uuid.NewString(), Key: q.key, Symbol: m.Symbol, OrderType: b.OrderType, TimeInForce: tif,
		TriggerDirection: b.TriggerDirection, TriggerBy: b.TriggerBy, CloseOnTrigger: b.CloseOnTrigger, RejectReason: "EC_NoError", Created: q.now}
	po, err := s.eng.PlaceOrder(q.key, r)
	switch {
	case errors.Is(err, paper.ErrPostOnlyWouldCross):
		// Accepted, then cancelled: not an error on Bybit (enum page, rejectReason).
		frozen := paper.Order{ClientOrderID: b.OrderLinkID, Market: m.Symbol, Side: side, Type: paper.Limit, Size: qty, Price: r.Price,
			FilledSize: decimal.Zero, AvgFillPrice: decimal.Zero, Fee: decimal.Zero, PostOnly: true, Status: paper.Cancelled,
			CreatedAt: q.now, UpdatedAt: q.now}
		bo.frozen, bo.RejectReason = &frozen, "EC_PostOnlyWillTakeLiquidity"
	case err != nil:
		return nil, placeError(err)
	default:
		bo.PaperID = po.ID
	}
	s.mu.Lock()
	s.orders[bo.ID] = bo
	if bo.PaperID != "" {
		s.byPaper[q.key+" "+bo.PaperID] = bo.ID
	}
	s.mu.Unlock()
	if bo.frozen != nil {
		s.pushFrozen(q.key, bo)
	}
	return bo, nil
}

// placeError maps an engine refusal to Bybit's retCode (error page).
func placeError(err error) *apiErr {
	switch {
	case errors.Is(err, paper.ErrInsufficientMargin):
		return errf(110007, "ab not enough for new order")
	case errors.Is(err, paper.ErrReduceOnly):
		return errf(110017, "Reduce-only rule not satisfied")
	case errors.Is(err, paper.ErrInvalidOrder) && strings.Contains(err.Error(), "below minimum"):
		return errf(110094, "Order does not meet minimum order value")
	case errors.Is(err, paper.ErrInvalidOrder):
		return errf(10001, "params error: %v", err)
	}
	return errf(10016, "%v", err)
}

func (s *Server) findLink(key, link string) *bybitOrder {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.orders {
		if o.Key == key && s.linkOf(o) == link {
			return o
		}
	}
	return nil
}

// linkOf is an order's orderLinkId (the engine keeps it as the client id).
func (s *Server) linkOf(o *bybitOrder) string {
	if o.frozen != nil {
		return o.frozen.ClientOrderID
	}
	po, err := s.eng.Order(o.Key, o.PaperID)
	if err != nil {
		return ""
	}
	return po.ClientOrderID
}

// order/batch-place: result.list and retExtInfo.list aligned by index;
// a refused order has empty fields and its own code (not atomic).
func (s *Server) createBatch(q *req) (any, *apiErr) {
	var b struct {
		Category string       `json:"category"`
		Request  []createBody `json:"request"`
	}
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	if e := checkCategory(b.Category); e != nil {
		return nil, e
	}
	if len(b.Request) == 0 || len(b.Request) > 20 {
		return nil, errf(10001, "params error: batch takes 1 to 20 orders")
	}
	var list, ext []map[string]any
	for _, r := range b.Request {
		r.Category = b.Category
		o, e := s.place(q, r)
		if e != nil {
			list = append(list, map[string]any{"category": "", "symbol": "", "orderId": "", "orderLinkId": "", "createAt": ""})
			ext = append(ext, map[string]any{"code": e.code, "msg": e.msg})
			continue
		}
		list = append(list, map[string]any{"category": "linear", "symbol": o.Symbol, "orderId": o.ID, "orderLinkId": r.OrderLinkID,
			"createAt": strconv.FormatInt(q.now.UnixMilli(), 10)})
		ext = append(ext, map[string]any{"code": 0, "msg": "OK"})
	}
	return withExt{result: map[string]any{"list": list}, ext: map[string]any{"list": ext}}, nil
}

// snapshot is an order's current state from the engine.
func (s *Server) snapshot(o *bybitOrder) (paper.Order, bool) {
	if o.frozen != nil {
		return *o.frozen, true
	}
	po, err := s.eng.Order(o.Key, o.PaperID)
	return po, err == nil
}

func statusOf(po paper.Order) string {
	switch po.Status {
	case paper.Open:
		if po.FilledSize.IsPositive() {
			return "PartiallyFilled"
		}
		return "New"
	case paper.Pending:
		return "Untriggered"
	case paper.Filled:
		return "Filled"
	case paper.Cancelled:
		return "Cancelled"
	}
	return "Rejected"
}

// orderRow renders an order as the open-order page shows it.
func orderRow(o *bybitOrder, po paper.Order) map[string]any {
	side := "Buy"
	if po.Side == paper.Sell {
		side = "Sell"
	}
	avg := ""
	if po.FilledSize.IsPositive() {
		avg = po.AvgFillPrice.String()
	}
	stopType, trigger, price := "", "0", po.Price.String()
	if po.TriggerPrice.IsPositive() {
		stopType, trigger, price = "Stop", po.TriggerPrice.String(), "0"
	}
	reason := o.RejectReason
	if po.Status == paper.Rejected && reason == "EC_NoError" {
		reason = "EC_NoImmediateQtyToFill"
	}
	return map[string]any{
		"orderId": o.ID, "orderLinkId": po.ClientOrderID, "blockTradeId": "", "symbol": po.Market, "price": price,
		"qty": po.Size.String(), "side": side, "isLeverage": "", "positionIdx": 0, "orderStatus": statusOf(po),
		"createType": "CreateByUser", "cancelType": "UNKNOWN", "rejectReason": reason, "avgPrice": avg,
		"leavesQty": po.Size.Sub(po.FilledSize).String(), "leavesValue": "0", "cumExecQty": po.FilledSize.String(),
		"cumExecValue": po.FilledSize.Mul(po.AvgFillPrice).String(), "cumExecFee": "", "timeInForce": o.TimeInForce,
		"orderType": o.OrderType, "stopOrderType": stopType, "orderIv": "", "triggerPrice": trigger, "takeProfit": "",
		"stopLoss": "", "tpTriggerBy": "", "slTriggerBy": "", "triggerDirection": o.TriggerDirection, "triggerBy": o.TriggerBy,
		"lastPriceOnCreated": "", "reduceOnly": po.ReduceOnly, "closeOnTrigger": o.CloseOnTrigger, "smpType": "None",
		"smpGroup": 0, "smpOrderId": "", "tpslMode": "", "tpLimitPrice": "", "slLimitPrice": "", "placeType": "",
		"createdTime": strconv.FormatInt(o.Created.UnixMilli(), 10), "updatedTime": strconv.FormatInt(po.UpdatedAt.UnixMilli(), 10),
		"cumFeeDetail": map[string]string{"USDT": po.Fee.String()},
	}
}

// order/open-order (realtime: open orders; by orderId or orderLinkId in
// any state, openOnly ignored) and order/order-list (history: any state).
// Newest first, limit 1-50 (default 20), cursor pagination.
func (s *Server) listOrders(q *req, realtime bool) (any, *apiErr) {
	if e := checkCategory(q.get("category")); e != nil {
		return nil, e
	}
	id, link, sym := q.get("orderId"), q.get("orderLinkId"), q.get("symbol")
	if realtime && id == "" && link == "" && sym == "" && q.get("settleCoin") == "" && q.get("baseCoin") == "" {
		return nil, errf(10001, "params error: symbol, settleCoin or baseCoin is required")
	}
	limit, e := q.limit(20, 50)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	if (id != "" || link != "") && s.lag > 0 { // still in Bybit's intake: not visible yet
		s.lag--
		s.mu.Unlock()
		return map[string]any{"category": "linear", "list": []any{}, "nextPageCursor": ""}, nil
	}
	var mine []*bybitOrder
	for _, o := range s.orders {
		if o.Key == q.key {
			mine = append(mine, o)
		}
	}
	s.mu.Unlock()
	sort.Slice(mine, func(i, j int) bool {
		if !mine[i].Created.Equal(mine[j].Created) {
			return mine[i].Created.After(mine[j].Created)
		}
		return mine[i].ID > mine[j].ID
	})
	var rows []map[string]any
	for _, o := range mine {
		po, ok := s.snapshot(o)
		if !ok || (sym != "" && po.Market != sym) || (id != "" && o.ID != id) || (link != "" && po.ClientOrderID != link) {
			continue
		}
		byID := id != "" || link != ""
		open := po.Status == paper.Open || po.Status == paper.Pending
		if realtime && !byID && !open && q.get("openOnly") != "1" {
			continue
		}
		if f := q.get("orderFilter"); (f == "StopOrder" && !po.TriggerPrice.IsPositive()) || (f == "Order" && po.TriggerPrice.IsPositive()) {
			continue
		}
		rows = append(rows, orderRow(o, po))
	}
	start, _ := strconv.Atoi(q.get("cursor"))
	start = min(max(start, 0), len(rows))
	end := min(start+limit, len(rows))
	next := ""
	if end < len(rows) {
		next = strconv.Itoa(end)
	}
	return map[string]any{"category": "linear", "list": nonNil(rows[start:end]), "nextPageCursor": next}, nil
}

func nonNil(rows []map[string]any) []map[string]any {
	if rows == nil {
		return []map[string]any{}
	}
	return rows
}

// order/cancel-order: symbol required, orderId or orderLinkId; 110001 when
// the order is unknown or no longer open.
func (s *Server) cancel(q *req) (any, *apiErr) {
	var b struct{ Category, Symbol, OrderID, OrderLinkID string }
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	if e := checkCategory(b.Category); e != nil {
		return nil, e
	}
	if _, e := s.market(b.Symbol); e != nil {
		return nil, e
	}
	o := s.ownOrder(q.key, b.Symbol, b.OrderID, b.OrderLinkID)
	if o == nil {
		return nil, errf(110001, "Order does not exist.")
	}
	po, err := s.eng.CancelOrder(q.key, o.PaperID)
	if err != nil {
		return nil, errf(110001, "Order does not exist.")
	}
	return map[string]string{"orderId": o.ID, "orderLinkId": po.ClientOrderID}, nil
}

// order/cancel-all: every open order of the symbol, conditional ones too;
// the list names what was cancelled.
func (s *Server) cancelAll(q *req) (any, *apiErr) {
	var b struct{ Category, Symbol, SettleCoin, BaseCoin string }
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	if e := checkCategory(b.Category); e != nil {
		return nil, e
	}
	if b.Symbol == "" && b.SettleCoin == "" && b.BaseCoin == "" {
		return nil, errf(10001, "params error: symbol, settleCoin or baseCoin is required")
	}
	s.mu.Lock()
	var mine []*bybitOrder
	for _, o := range s.orders {
		if o.Key == q.key && o.frozen == nil && (b.Symbol == "" || o.Symbol == b.Symbol) {
			mine = append(mine, o)
		}
	}
	s.mu.Unlock()
	list := []map[string]string{}
	for _, o := range mine {
		if po, err := s.eng.CancelOrder(q.key, o.PaperID); err == nil {
			list = append(list, map[string]string{"orderId": o.ID, "orderLinkId": po.ClientOrderID})
		}
	}
	return map[string]any{"list": list, "success": "1"}, nil
}

// execution is one row of order/execution.
type execution struct {
	Symbol      string `json:"symbol"`
	OrderID     string `json:"orderId"`
	OrderLinkID string `json:"orderLinkId"`
	Side        string `json:"side"`
	OrderPrice  string `json:"orderPrice"`
	OrderQty    string `json:"orderQty"`
	OrderType   string `json:"orderType"`
	ExecFee     string `json:"execFee"`
	FeeCurrency string `json:"feeCurrency"`
	ExecID      string `json:"execId"`
	ExecPrice   string `json:"execPrice"`
	ExecQty     string `json:"execQty"`
	ExecType    string `json:"execType"`
	ExecValue   string `json:"execValue"`
	ExecTime    string `json:"execTime"`
	IsMaker     bool   `json:"isMaker"`
	FeeRate     string `json:"feeRate"`
	ClosedSize  string `json:"closedSize"`
	Seq         int64  `json:"seq"`
}

// order/execution: trades and funding rows alike unless execType filters;
// newest first, limit 1-100 (default 50).
func (s *Server) executions(q *req) (any, *apiErr) {
	if e := checkCategory(q.get("category")); e != nil {
		return nil, e
	}
	limit, e := q.limit(50, 100)
	if e != nil {
		return nil, e
	}
	sym, id, typ := q.get("symbol"), q.get("orderId"), q.get("execType")
	fills, _ := s.eng.Fills(q.key, sym, 10000)
	s.mu.Lock()
	var rows []execution
	for _, f := range fills {
		bid := s.byPaper[q.key+" "+f.OrderID]
		side := "Buy"
		if f.Side == paper.Sell {
			side = "Sell"
		}
		rows = append(rows, execution{Symbol: f.Market, OrderID: bid, OrderLinkID: f.ClientOrderID, Side: side, ExecFee: f.Fee.String(),
			FeeCurrency: "USDT", ExecID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(f.ID)).String(), ExecPrice: f.Price.String(),
			ExecQty: f.Size.String(), ExecType: "Trade", ExecValue: f.Size.Mul(f.Price).String(),
			ExecTime: strconv.FormatInt(f.Time.UnixMilli(), 10), IsMaker: f.Liquidity == paper.Maker, OrderType: "Market"})
	}
	rows = append(rows, s.funding[q.key]...)
	s.mu.Unlock()
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ExecTime > rows[j].ExecTime })
	var match []execution
	for _, r := range rows {
		if (sym == "" || r.Symbol == sym) && (id == "" || r.OrderID == id) && (typ == "" || r.ExecType == typ) {
			match = append(match, r)
		}
	}
	// A page holds at most limit (100) rows; nextPageCursor, opaque to the
	// client, reads on (execution page: "cursor", "nextPageCursor").
	from := 0
	if c := q.get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "page-"))
		if err != nil || n < 0 || !strings.HasPrefix(c, "page-") {
			return nil, errf(10001, "params error: cursor invalid")
		}
		from = min(n, len(match))
	}
	out, next := append([]execution{}, match[from:min(from+limit, len(match))]...), ""
	if from+limit < len(match) {
		next = "page-" + strconv.Itoa(from+limit)
	}
	return map[string]any{"category": "linear", "list": out, "nextPageCursor": next}, nil
}
