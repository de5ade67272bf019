package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// table lists the endpoints and whether they are private.
func (s *Server) table() map[string]route {
	pub := func(h func(*req) (any, *apiErr)) route { return route{h: h} }
	sig := func(h func(*req) (any, *apiErr)) route { return route{signed: true, h: h} }
	return map[string]route{
		"GET /api/v5/public/time":                pub(s.serverTime),
		"GET /api/v5/public/instruments":         pub(s.instruments),
		"GET /api/v5/market/books":               pub(s.books),
		"GET /api/v5/public/mark-price":          pub(s.markPrice),
		"GET /api/v5/market/index-tickers":       pub(s.indexTickers),
		"GET /api/v5/market/candles":             pub(s.candles),
		"GET /api/v5/public/funding-rate":        pub(s.fundingRate),
		"GET /api/v5/public/open-interest":       pub(s.openInterest),
		"GET /api/v5/account/trade-fee":          sig(s.tradeFee),
		"GET /api/v5/account/balance":            sig(s.balance),
		"GET /api/v5/account/positions":          sig(s.positions),
		"GET /api/v5/account/config":             sig(s.accountConfig),
		"POST /api/v5/account/set-leverage":      sig(s.setLeverage),
		"GET /api/v5/trade/fills":                sig(s.fills),
		"GET /api/v5/trade/order":                sig(s.orderDetails),
		"GET /api/v5/trade/orders-pending":       sig(s.ordersPending),
		"POST /api/v5/trade/order":               sig(s.placeOrder),
		"POST /api/v5/trade/batch-orders":        sig(s.batchOrders),
		"POST /api/v5/trade/cancel-order":        sig(s.cancelOrder),
		"POST /api/v5/trade/cancel-batch-orders": sig(s.cancelBatch),
		"POST /api/v5/trade/order-algo":          sig(s.placeAlgo),
		"POST /api/v5/trade/cancel-algos":        sig(s.cancelAlgos),
		"GET /api/v5/trade/order-algo":           sig(s.algoDetails),
		"GET /api/v5/trade/orders-algo-pending":  sig(s.algosPending),
	}
}

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func (s *Server) inst(id string) (Instrument, *apiErr) {
	if id == "" {
		return Instrument{}, badParam("instId")
	}
	in, ok := s.insts[id]
	if !ok {
		return Instrument{}, errf("51001", "Instrument ID does not exist")
	}
	return in, nil
}

func contracts(base decimal.Decimal, in Instrument) decimal.Decimal {
	return base.DivRound(in.CtVal, 16)
}

func okxID(paperID string, offset int64) string {
	n, _ := strconv.ParseInt(paperID, 10, 64)
	return strconv.FormatInt(n+offset, 10)
}

func paperID(okx string, offset int64) (string, bool) {
	n, err := strconv.ParseInt(okx, 10, 64)
	if err != nil || n <= offset {
		return "", false
	}
	return strconv.FormatInt(n-offset, 10), true
}

// https://www.okx.com/docs-v5/en/#public-data-rest-api-get-system-time
func (s *Server) serverTime(q *req) (any, *apiErr) {
	return []map[string]string{{"ts": ms(q.now)}}, nil
}

// https://www.okx.com/docs-v5/en/#public-data-rest-api-get-instruments
func (s *Server) instruments(q *req) (any, *apiErr) {
	if q.get("instType") == "" {
		return nil, badParam("instType")
	}
	out := []map[string]string{}
	if q.get("instType") != "SWAP" {
		return out, nil
	}
	for _, id := range s.order {
		in := s.insts[id]
		fam := in.Base + "-USDT"
		out = append(out, map[string]string{
			"instType": "SWAP", "instId": in.InstID, "uly": fam, "instFamily": fam, "baseCcy": "", "quoteCcy": "",
			"settleCcy": "USDT", "ctVal": in.CtVal.String(), "ctMult": "1", "ctValCcy": in.Base, "ctType": "linear",
			"tickSz": in.TickSz.String(), "lotSz": in.LotSz.String(), "minSz": in.MinSz.String(), "maxMktSz": in.MaxMktSz.String(),
			"maxLmtSz": "100000000", "lever": strconv.Itoa(in.Lever), "state": "live", "groupId": "2",
			"listTime": "1611916800000", "expTime": "", "alias": "", "optType": "", "stk": "",
		})
	}
	// An inverse (coin-margined) swap, which the connector must not list.
	out = append(out, map[string]string{"instType": "SWAP", "instId": "BTC-USD-SWAP", "uly": "BTC-USD", "instFamily": "BTC-USD",
		"settleCcy": "BTC", "ctVal": "100", "ctValCcy": "USD", "ctType": "inverse", "tickSz": "0.1", "lotSz": "1", "minSz": "1",
		"maxMktSz": "10000", "lever": "100", "state": "live", "groupId": "1"})
	return out, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-get-order-book
func (s *Server) books(q *req) (any, *apiErr) {
	in, e := s.inst(q.get("instId"))
	if e != nil {
		return nil, e
	}
	n := 1
	if v := q.get("sz"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 400 {
			return nil, badParam("sz")
		}
	}
	b, err := s.eng.Orderbook(in.InstID, min(n, 100))
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	side := func(ls []paper.Level) [][]string {
		out := [][]string{}
		for _, l := range ls {
			out = append(out, []string{l.Price.String(), contracts(l.Size, in).String(), "0", "3"})
		}
		return out
	}
	return []map[string]any{{"asks": side(b.Asks), "bids": side(b.Bids), "ts": ms(q.now)}}, nil
}

// https://www.okx.com/docs-v5/en/#public-data-rest-api-get-mark-price
func (s *Server) markPrice(q *req) (any, *apiErr) {
	if q.get("instType") == "" {
		return nil, badParam("instType")
	}
	out := []map[string]string{}
	for _, id := range s.order {
		if q.get("instId") != "" && q.get("instId") != id {
			continue
		}
		m, _ := s.eng.Market(id)
		out = append(out, map[string]string{"instType": "SWAP", "instId": id, "markPx": m.MarkPrice.String(), "ts": ms(q.now)})
	}
	if q.get("instId") != "" && len(out) == 0 {
		return nil, errf("51001", "Instrument ID does not exist")
	}
	return out, nil
}

// https://www.okx.com/docs-v5/en/#public-data-rest-api-get-index-tickers
func (s *Server) indexTickers(q *req) (any, *apiErr) {
	want := q.get("instId")
	if want == "" && q.get("quoteCcy") == "" {
		return nil, errf("50014", "Parameter instId or quoteCcy can not be empty")
	}
	out := []map[string]string{}
	for _, id := range s.order {
		in := s.insts[id]
		name := in.Base + "-USDT"
		if want != "" && want != name {
			continue
		}
		m, _ := s.eng.Market(id)
		out = append(out, map[string]string{"instId": name, "idxPx": m.IndexPrice.String(), "high24h": "", "low24h": "",
			"open24h": "", "sodUtc0": "", "sodUtc8": "", "ts": ms(q.now)})
	}
	return out, nil
}

var barMinutes = map[string]int{"1m": 1, "3m": 3, "5m": 5, "15m": 15, "30m": 30, "1H": 60, "2H": 120, "4H": 240,
	"1Dutc": 1440, "1D": 1440}

// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-get-candlesticks
// Newest first; at most 300 a call; after = older than that ts. 1D bars
// open at UTC+8 midnight on OKX; the simulator aligns both to UTC.
func (s *Server) candles(q *req) (any, *apiErr) {
	in, e := s.inst(q.get("instId"))
	if e != nil {
		return nil, e
	}
	bar := q.get("bar")
	if bar == "" {
		bar = "1m"
	}
	iv, ok := barMinutes[bar]
	if !ok {
		return nil, badParam("bar")
	}
	limit := 100
	if v := q.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, badParam("limit")
		}
		limit = min(n, 300)
	}
	need := limit
	var after int64
	if v := q.get("after"); v != "" {
		var err error
		if after, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, badParam("after")
		}
		need += int((q.now.UnixMilli()-after)/int64(iv*60000)) + 1
	}
	cs, err := s.eng.Candles(in.InstID, iv, min(need, 1500))
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	out := [][]string{}
	cur := q.now.Unix() / int64(iv*60) * int64(iv*60)
	for i := len(cs) - 1; i >= 0 && len(out) < limit; i-- {
		c := cs[i]
		if after > 0 && c.Time.UnixMilli() >= after {
			continue
		}
		confirm := "1"
		if c.Time.Unix() == cur {
			confirm = "0"
		}
		out = append(out, []string{ms(c.Time), c.Open.String(), c.High.String(), c.Low.String(), c.Close.String(),
			contracts(c.Volume, in).String(), c.Volume.String(), c.Volume.Mul(c.Close).String(), confirm})
	}
	return out, nil
}

// https://www.okx.com/docs-v5/en/#public-data-rest-api-get-funding-rate
// instId=ANY answers every swap.
func (s *Server) fundingRate(q *req) (any, *apiErr) {
	want := q.get("instId")
	if want == "" {
		return nil, badParam("instId")
	}
	if want != "ANY" {
		if _, e := s.inst(want); e != nil {
			return nil, e
		}
	}
	out := []map[string]string{}
	for _, id := range s.order {
		if want != "ANY" && want != id {
			continue
		}
		f, _ := s.eng.Funding(id)
		out = append(out, map[string]string{"instType": "SWAP", "instId": id, "fundingRate": f.Rate.String(),
			"nextFundingRate": "", "fundingTime": ms(f.NextTime), "nextFundingTime": ms(f.NextTime.Add(f.Interval)),
			"minFundingRate": "-0.0075", "maxFundingRate": "0.0075", "settState": "settled", "settFundingRate": f.Rate.String(),
			"premium": "0", "method": "current_period", "formulaType": "withRate", "impactValue": "", "interestRate": "0.0001", "ts": ms(q.now)})
	}
	return out, nil
}

// https://www.okx.com/docs-v5/en/#public-data-rest-api-get-open-interest
func (s *Server) openInterest(q *req) (any, *apiErr) {
	if q.get("instType") == "" {
		return nil, badParam("instType")
	}
	out := []map[string]string{}
	for _, id := range s.order {
		if q.get("instId") != "" && q.get("instId") != id {
			continue
		}
		m, _ := s.eng.Market(id)
		in := s.insts[id]
		out = append(out, map[string]string{"instType": "SWAP", "instId": id, "oi": contracts(m.OpenInterest, in).String(),
			"oiCcy": m.OpenInterest.String(), "oiUsd": m.OpenInterest.Mul(m.MarkPrice).String(), "ts": ms(q.now)})
	}
	return out, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-fee-rates
// Rates are negative when charged; the top-level maker/taker fields are
// deprecated and empty for swaps.
func (s *Server) tradeFee(q *req) (any, *apiErr) {
	if q.get("instType") == "" {
		return nil, badParam("instType")
	}
	f := s.eng.Fees()
	bp := decimal.NewFromInt(-10000)
	return []map[string]any{{"level": "Lv1", "instType": q.get("instType"), "maker": "", "taker": "", "makerU": "", "takerU": "",
		"feeGroup": []map[string]string{{"groupId": "1", "maker": "-0.0002", "taker": "-0.0005"},
			{"groupId": "2", "maker": f.MakerBps.Div(bp).String(), "taker": f.TakerBps.Div(bp).String()}},
		"ts": ms(q.now)}}, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-balance
func (s *Server) balance(q *req) (any, *apiErr) {
	b, err := s.eng.Balance(q.key)
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	usdt := map[string]string{"ccy": "USDT", "eq": b.Equity.String(), "cashBal": b.Wallet.String(), "availBal": b.FreeCollateral.String(),
		"availEq": b.FreeCollateral.String(), "upl": b.UnrealizedPnL.String(), "frozenBal": b.PositionMargin.Add(b.OrderMargin).String(),
		"eqUsd": b.Equity.String(), "uTime": ms(q.now)}
	if s.mode(q.key).acctLv == "1" {
		usdt["availEq"] = ""
	}
	return []map[string]any{{"totalEq": b.Equity.String(), "adjEq": "", "imr": b.PositionMargin.String(), "mmr": "0",
		"upl": b.UnrealizedPnL.String(), "uTime": ms(q.now), "details": []any{usdt}}}, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-positions
func (s *Server) positions(q *req) (any, *apiErr) {
	if v := q.get("instType"); v != "" && v != "SWAP" {
		return []any{}, nil
	}
	want := q.get("instId")
	if want != "" {
		if _, e := s.inst(want); e != nil {
			return nil, e
		}
	}
	ps, err := s.eng.Positions(q.key, want)
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	out := []map[string]string{}
	for _, p := range ps {
		in := s.insts[p.Market]
		pos := contracts(p.Size, in)
		if p.Side == paper.Short {
			pos = pos.Neg()
		}
		out = append(out, map[string]string{"instType": "SWAP", "instId": p.Market, "mgnMode": "cross", "posSide": "net",
			"pos": pos.String(), "posCcy": "", "avgPx": p.EntryPrice.String(), "markPx": p.MarkPrice.String(),
			"upl": p.UnrealizedPnL.String(), "lever": strconv.Itoa(p.Leverage), "notionalUsd": p.Notional.String(),
			"imr": p.Margin.String(), "ccy": "USDT", "cTime": ms(q.now), "uTime": ms(q.now)})
	}
	return out, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-account-configuration
func (s *Server) accountConfig(q *req) (any, *apiErr) {
	m := s.mode(q.key)
	return []map[string]string{{"uid": "44705892343619584", "mainUid": "44705892343619584", "acctLv": m.acctLv, "posMode": m.posMode,
		"autoLoan": "false", "greeksType": "PA", "level": "Lv1", "levelTmp": "", "ctIsoMode": "automatic", "mgnIsoMode": "automatic",
		"label": "sim", "perm": "read_only,trade", "ip": "", "roleType": "0", "spotRoleType": "0", "traderInsts": ""}}, nil
}

// body decodes a JSON object body into a string getter.
type fields func(name string) string

func getter(obj map[string]any) fields {
	return func(name string) string {
		v, ok := obj[name]
		if !ok || v == nil {
			return ""
		}
		switch x := v.(type) {
		case string:
			return x
		case bool:
			return strconv.FormatBool(x)
		case json.Number:
			return x.String()
		}
		return fmt.Sprint(v)
	}
}

func decodeObject(b []byte) (fields, *apiErr) {
	var obj map[string]any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil {
		return nil, errf("50002", "JSON syntax error")
	}
	return getter(obj), nil
}

func decodeArray(b []byte, most int) ([]fields, *apiErr) {
	var arr []map[string]any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&arr); err != nil {
		return nil, errf("50002", "JSON syntax error")
	}
	if len(arr) == 0 || len(arr) > most {
		return nil, errf("51000", "Parameter count error: at most %d items", most)
	}
	out := make([]fields, len(arr))
	for i, o := range arr {
		out[i] = getter(o)
	}
	return out, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-set-leverage
func (s *Server) setLeverage(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	in, e := s.inst(get("instId"))
	if e != nil {
		return nil, e
	}
	if mm := get("mgnMode"); mm != "cross" && mm != "isolated" {
		return nil, badParam("mgnMode")
	}
	lev, err := strconv.Atoi(get("lever"))
	if err != nil || lev < 1 {
		return nil, badParam("lever")
	}
	if lev > in.Lever {
		return nil, errf("59102", "Leverage exceeds the maximum leverage of %d", in.Lever)
	}
	got, err := s.eng.SetLeverage(q.key, in.InstID, lev)
	if errors.Is(err, paper.ErrInsufficientMargin) {
		return nil, errf("51008", "Order failed. Insufficient USDT margin in account")
	}
	if err != nil {
		return nil, errf("51000", "%v", err)
	}
	return []map[string]string{{"lever": strconv.Itoa(got), "mgnMode": get("mgnMode"), "instId": in.InstID, "posSide": ""}}, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-transaction-details-last-3-days
// Newest first; after = billId: older fills than that one.
func (s *Server) fills(q *req) (any, *apiErr) {
	want := q.get("instId")
	if want != "" {
		if _, e := s.inst(want); e != nil {
			return nil, e
		}
	}
	limit := 100
	if v := q.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, badParam("limit")
		}
		limit = n
	}
	var after int64
	if v := q.get("after"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	wantOrd := ""
	if v := q.get("ordId"); v != "" {
		wantOrd, _ = paperID(v, ordOffset)
	}
	fs, err := s.eng.Fills(q.key, want, 100000)
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	out := []map[string]string{}
	for _, f := range fs {
		id := okxID(f.ID, fillOffset)
		n, _ := strconv.ParseInt(id, 10, 64)
		if (after > 0 && n >= after) || (wantOrd != "" && f.OrderID != wantOrd) || len(out) == limit {
			continue
		}
		in := s.insts[f.Market]
		exec := "T"
		if f.Liquidity == paper.Maker {
			exec = "M"
		}
		out = append(out, map[string]string{"instType": "SWAP", "instId": f.Market, "tradeId": id, "billId": id,
			"ordId": okxID(f.OrderID, ordOffset), "clOrdId": f.ClientOrderID, "side": strings.ToLower(string(f.Side)),
			"posSide": "net", "fillSz": contracts(f.Size, in).String(), "fillPx": f.Price.String(), "fee": f.Fee.Neg().String(),
			"feeCcy": "USDT", "execType": exec, "fillPnl": f.RealizedPnL.String(), "ts": ms(f.Time), "fillTime": ms(f.Time)})
	}
	return out, nil
}

// deadOrder is a post-only order OKX accepted and then cancelled because
// it would have taken liquidity (cancelSource 31); the paper engine
// refuses it outright, so the simulator keeps it.
type deadOrder struct {
	key   string
	wire  map[string]string
	clOrd string
}

// wireOrder renders a paper order as order details
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-order-details).
func wireOrder(o paper.Order, in Instrument, ordType string) map[string]string {
	state := map[paper.OrderStatus]string{paper.Open: "live", paper.Filled: "filled", paper.Cancelled: "canceled", paper.Rejected: "canceled"}[o.Status]
	if o.Status == paper.Open && o.FilledSize.IsPositive() {
		state = "partially_filled"
	}
	px := ""
	if o.Type == paper.Limit {
		px = o.Price.String()
	}
	avg := ""
	if o.FilledSize.IsPositive() {
		avg = o.AvgFillPrice.String()
	}
	if ordType == "" {
		ordType = map[paper.OrderType]string{paper.Limit: "limit", paper.Market: "market"}[o.Type]
		if o.PostOnly {
			ordType = "post_only"
		}
	}
	return map[string]string{"instType": "SWAP", "instId": o.Market, "ordId": okxID(o.ID, ordOffset), "clOrdId": o.ClientOrderID,
		"tag": "", "px": px, "sz": contracts(o.Size, in).String(), "ordType": ordType, "side": strings.ToLower(string(o.Side)),
		"posSide": "net", "tdMode": "cross", "accFillSz": contracts(o.FilledSize, in).String(), "fillPx": avg, "avgPx": avg,
		"state": state, "lever": "20", "fee": o.Fee.Neg().String(), "feeCcy": "USDT", "reduceOnly": strconv.FormatBool(o.ReduceOnly),
		"cancelSource": "", "cTime": ms(o.CreatedAt), "uTime": ms(o.UpdatedAt)}
}

// lookupOrder finds an order by ordId or clOrdId, the paper engine's or a
// dead post-only one.
func (s *Server) lookupOrder(key string, get fields) (map[string]string, paper.Order, bool, *apiErr) {
	in, e := s.inst(get("instId"))
	if e != nil {
		return nil, paper.Order{}, false, e
	}
	ordID, cl := get("ordId"), get("clOrdId")
	if ordID == "" && cl == "" {
		return nil, paper.Order{}, false, errf("51000", "Parameter ordId or clOrdId error")
	}
	s.mu.Lock()
	for id, d := range s.dead {
		if d.key == key && d.wire["instId"] == in.InstID && ((ordID != "" && id == ordID) || (ordID == "" && d.clOrd == cl)) {
			s.mu.Unlock()
			return d.wire, paper.Order{}, false, nil
		}
	}
	s.mu.Unlock()
	var o paper.Order
	var err error
	if ordID != "" {
		pid, ok := paperID(ordID, ordOffset)
		if !ok {
			return nil, o, false, errf("51603", "Order does not exist")
		}
		o, err = s.eng.Order(key, pid)
	} else {
		o, err = s.eng.OrderByClientID(key, cl)
	}
	if err != nil || o.Market != in.InstID || (o.Type != paper.Limit && o.Type != paper.Market) {
		return nil, o, false, errf("51603", "Order does not exist")
	}
	return wireOrder(o, in, ""), o, true, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-order-details
func (s *Server) orderDetails(q *req) (any, *apiErr) {
	w, _, _, e := s.lookupOrder(q.key, q.get)
	if e != nil {
		return nil, e
	}
	return []map[string]string{w}, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-order-list
// Oldest last: newest first, after = ordId: older orders than that one.
func (s *Server) ordersPending(q *req) (any, *apiErr) {
	want := q.get("instId")
	if want != "" {
		if _, e := s.inst(want); e != nil {
			return nil, e
		}
	}
	limit := 100
	if v := q.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, badParam("limit")
		}
		limit = n
	}
	var after int64
	if v := q.get("after"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	open, err := s.eng.OpenOrders(q.key, want)
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	out := []map[string]string{}
	for i := len(open) - 1; i >= 0 && len(out) < limit; i-- {
		o := open[i]
		id, _ := strconv.ParseInt(okxID(o.ID, ordOffset), 10, 64)
		if o.Type != paper.Limit || (after > 0 && id >= after) {
			continue
		}
		out = append(out, wireOrder(o, s.insts[o.Market], ""))
	}
	return out, nil
}

// clOrdPattern is OKX's rule for clOrdId and algoClOrdId.
var clOrdPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)

// placeOne runs Place Order's checks and places the order; the answer is
// the data item, sCode "0" or an error.
func (s *Server) placeOne(q *req, get fields) (map[string]string, *apiErr) {
	cl := get("clOrdId")
	item := func(code, msg string) *apiErr {
		return &apiErr{status: 200, code: code, msg: msg}
	}
	if cl != "" && !clOrdPattern.MatchString(cl) {
		return nil, item("51000", "Parameter clOrdId error")
	}
	in, e := s.inst(get("instId"))
	if e != nil {
		return nil, e
	}
	mode := s.mode(q.key)
	if mode.acctLv == "1" {
		return nil, item("51010", "You can't complete this request under your current account mode.")
	}
	if mode.posMode == "long_short_mode" && get("posSide") == "" {
		return nil, item("51000", "Parameter posSide error")
	}
	if td := get("tdMode"); td != "cross" && td != "isolated" {
		return nil, badParam("tdMode")
	}
	side := get("side")
	if side != "buy" && side != "sell" {
		return nil, badParam("side")
	}
	sz, err := decimal.NewFromString(get("sz"))
	if err != nil || !sz.IsPositive() {
		return nil, badParam("sz")
	}
	if !sz.Mod(in.LotSz).IsZero() {
		return nil, item("51121", fmt.Sprintf("Order quantity must be a multiple of the lot size %s", in.LotSz))
	}
	if sz.LessThan(in.MinSz) {
		return nil, item("51020", "Your order should meet or exceed the minimum order amount.")
	}
	req := paper.OrderRequest{Market: in.InstID, Side: paper.Side(strings.ToUpper(side)), Size: sz.Mul(in.CtVal),
		ReduceOnly: get("reduceOnly") == "true", ClientOrderID: cl}
	typ := get("ordType")
	switch typ {
	case "market":
		req.Type = paper.Market
		if in.MaxMktSz.IsPositive() && sz.GreaterThan(in.MaxMktSz) {
			return nil, item("51005", "Order quantity exceeds the maximum market order size")
		}
	case "limit", "post_only":
		req.Type, req.PostOnly = paper.Limit, typ == "post_only"
		if req.Price, err = decimal.NewFromString(get("px")); err != nil || !req.Price.IsPositive() {
			return nil, badParam("px")
		}
		if !req.Price.Mod(in.TickSz).IsZero() {
			return nil, item("51150", "The precision of the number of trades or the price exceeds the limit")
		}
	default:
		return nil, badParam("ordType")
	}
	if cl != "" {
		if o, err := s.eng.OrderByClientID(q.key, cl); err == nil && (o.Status == paper.Open || o.Status == paper.Pending) {
			return nil, item("51016", "Duplicated clOrdId")
		}
	}
	o, err := s.eng.PlaceOrder(q.key, req)
	switch {
	case errors.Is(err, paper.ErrPostOnlyWouldCross):
		return s.killPostOnly(q, in, get), nil
	case errors.Is(err, paper.ErrInsufficientMargin):
		return nil, item("51008", "Order failed. Insufficient USDT margin in account")
	case errors.Is(err, paper.ErrReduceOnly):
		return nil, item("51169", "Order failed because you don't have any positions in this direction for this contract to reduce or close.")
	case err != nil:
		return nil, item("51000", err.Error())
	}
	return map[string]string{"ordId": okxID(o.ID, ordOffset), "clOrdId": cl, "tag": "", "ts": ms(q.now), "sCode": "0", "sMsg": "Order placed"}, nil
}

// killPostOnly does what OKX does with a post-only order that would take
// liquidity: accept it, then cancel it with cancelSource 31.
func (s *Server) killPostOnly(q *req, in Instrument, get fields) map[string]string {
	s.mu.Lock()
	s.deadSeq++
	id := strconv.FormatInt(deadOffset+s.deadSeq, 10)
	s.dead[id] = deadOrder{key: q.key, clOrd: get("clOrdId"), wire: map[string]string{"instType": "SWAP", "instId": in.InstID,
		"ordId": id, "clOrdId": get("clOrdId"), "tag": "", "px": get("px"), "sz": get("sz"), "ordType": "post_only",
		"side": get("side"), "posSide": "net", "tdMode": "cross", "accFillSz": "0", "fillPx": "", "avgPx": "",
		"state": "canceled", "lever": "20", "fee": "0", "feeCcy": "USDT", "reduceOnly": strconv.FormatBool(get("reduceOnly") == "true"),
		"cancelSource": "31", "cancelSourceReason": "Post only order would take liquidity", "cTime": ms(q.now), "uTime": ms(q.now)}}
	s.mu.Unlock()
	return map[string]string{"ordId": id, "clOrdId": get("clOrdId"), "tag": "", "ts": ms(q.now), "sCode": "0", "sMsg": "Order placed"}
}

// failedItem is a data item of a refused order.
func failedItem(e *apiErr, get fields) map[string]string {
	return map[string]string{"ordId": "", "clOrdId": get("clOrdId"), "tag": "", "ts": "", "sCode": e.code, "sMsg": e.msg}
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-place-order
// A refused order answers code 1 with the reason in data[0].sCode.
func (s *Server) placeOrder(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	item, e := s.placeOne(q, get)
	if e != nil {
		return nil, &apiErr{status: 200, code: "1", msg: "All operations failed", data: []any{failedItem(e, get)}}
	}
	return []any{item}, nil
}

// batchEnvelope picks code 0, 1 (all failed) or 2 (some failed).
func batchEnvelope(items []map[string]string) any {
	failed := 0
	for _, it := range items {
		if it["sCode"] != "0" {
			failed++
		}
	}
	switch {
	case failed == 0:
		return items
	case failed == len(items):
		return envelope{code: "1", msg: "All operations failed", data: items}
	}
	return envelope{code: "2", msg: "Bulk operation partially succeeded", data: items}
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-place-multiple-orders
func (s *Server) batchOrders(q *req) (any, *apiErr) {
	gets, e := decodeArray(q.body, 20)
	if e != nil {
		return nil, e
	}
	items := make([]map[string]string, len(gets))
	for i, get := range gets {
		it, e := s.placeOne(q, get)
		if e != nil {
			it = failedItem(e, get)
		}
		items[i] = it
	}
	return batchEnvelope(items), nil
}

// cancelOne cancels one regular order: 51400 when it is unknown or done.
func (s *Server) cancelOne(key string, get fields) map[string]string {
	w, o, live, e := s.lookupOrder(key, get)
	item := map[string]string{"ordId": get("ordId"), "clOrdId": get("clOrdId"), "ts": "", "sCode": "0", "sMsg": ""}
	if e != nil || !live || o.Status != paper.Open {
		if e != nil && e.code != "51603" {
			item["sCode"], item["sMsg"] = e.code, e.msg
		} else {
			item["sCode"], item["sMsg"] = "51400", "Cancellation failed as the order has been filled, canceled or does not exist."
		}
		return item
	}
	if _, err := s.eng.CancelOrder(key, o.ID); err != nil {
		item["sCode"], item["sMsg"] = "51400", "Cancellation failed as the order has been filled, canceled or does not exist."
		return item
	}
	item["ordId"], item["clOrdId"] = w["ordId"], w["clOrdId"]
	return item
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-cancel-order
func (s *Server) cancelOrder(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	it := s.cancelOne(q.key, get)
	if it["sCode"] != "0" {
		return nil, &apiErr{status: 200, code: "1", msg: "All operations failed", data: []any{it}}
	}
	return []any{it}, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-cancel-multiple-orders
func (s *Server) cancelBatch(q *req) (any, *apiErr) {
	gets, e := decodeArray(q.body, 20)
	if e != nil {
		return nil, e
	}
	items := make([]map[string]string, len(gets))
	for i, get := range gets {
		items[i] = s.cancelOne(q.key, get)
	}
	return batchEnvelope(items), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
