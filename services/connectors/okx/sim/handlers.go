package sim

import (
	"strconv"
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
		"GET /api/v5/account/leverage-info":      sig(s.leverageInfo),
		"GET /api/v5/trade/fills":                sig(s.fills),
		"GET /api/v5/trade/fills-history":        sig(s.fillsHistory),
		"GET /api/v5/account/bills":              sig(s.bills(7 * 24 * time.Hour)),
		"GET /api/v5/account/bills-archive":      sig(s.bills(90 * 24 * time.Hour)),
		"GET /api/v5/trade/order":                sig(s.orderDetails),
		"GET /api/v5/trade/orders-pending":       sig(s.ordersPending),
		"POST /api/v5/trade/order":               sig(s.placeOrder),
		"POST /api/v5/trade/batch-orders":        sig(s.batchOrders),
		"POST /api/v5/trade/cancel-order":        sig(s.cancelOrder),
		"POST /api/v5/trade/amend-order":         sig(s.amendOrder),
		"POST /api/v5/trade/amend-algos":         sig(s.amendAlgo),
		"POST /api/v5/trade/cancel-all-after":    sig(s.cancelAllAfter),
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
