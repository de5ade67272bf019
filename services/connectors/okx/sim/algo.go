package sim

import (
	"errors"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// algo is an algo order: a trigger stop, a conditional TP or SL, or an
// oco pair, backed by one or two paper trigger orders.
type algo struct {
	id, clOrd, key, instID, ordType, side string
	sz                                    decimal.Decimal // contracts
	triggerPx, tpPx, slPx                 decimal.Decimal
	reduceOnly                            bool
	paperIDs                              []string
	state                                 string // live, effective, canceled, order_failed
	cTime                                 string
}

// refresh brings an algo order's state up to date with its paper orders;
// when one leg of an oco pair has fired, OKX cancels the other.
func (s *Server) refresh(a *algo) {
	if a.state != "live" {
		return
	}
	fired, gone := false, 0
	for _, pid := range a.paperIDs {
		o, err := s.eng.Order(a.key, pid)
		switch {
		case err != nil || o.Status == paper.Cancelled:
			gone++
		case o.Status == paper.Filled:
			fired = true
		case o.Status == paper.Rejected:
			a.state = "order_failed"
			return
		}
	}
	switch {
	case fired:
		a.state = "effective"
		for _, pid := range a.paperIDs {
			_, _ = s.eng.CancelOrder(a.key, pid)
		}
	case gone == len(a.paperIDs):
		a.state = "canceled"
	}
}

func (s *Server) wireAlgo(a *algo) map[string]string {
	str := func(d decimal.Decimal) string {
		if d.IsZero() {
			return ""
		}
		return d.String()
	}
	w := map[string]string{"instType": "SWAP", "instId": a.instID, "algoId": a.id, "algoClOrdId": a.clOrd, "clOrdId": "",
		"ordType": a.ordType, "side": a.side, "posSide": "net", "tdMode": "cross", "sz": a.sz.String(), "state": a.state,
		"triggerPx": str(a.triggerPx), "triggerPxType": "", "ordPx": "", "tpTriggerPx": str(a.tpPx), "tpOrdPx": "",
		"slTriggerPx": str(a.slPx), "slOrdPx": "", "reduceOnly": strconv.FormatBool(a.reduceOnly), "cTime": a.cTime, "uTime": a.cTime}
	if a.ordType == "trigger" {
		w["triggerPxType"], w["ordPx"] = "mark", "-1"
	}
	if !a.tpPx.IsZero() {
		w["tpTriggerPxType"], w["tpOrdPx"] = "mark", "-1"
	}
	if !a.slPx.IsZero() {
		w["slTriggerPxType"], w["slOrdPx"] = "mark", "-1"
	}
	return w
}

// https://www.okx.com/docs-v5/en/#order-book-trading-algo-trading-post-place-algo-order
// Triggers on the mark price whatever triggerPxType says (the paper
// engine's triggers); only market execution (orderPx / tpOrdPx / slOrdPx
// -1). ccxt sends the client id as clOrdId; OKX's field is algoClOrdId.
func (s *Server) placeAlgo(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	a, e := s.newAlgo(q, get)
	if e != nil {
		e.data = []any{map[string]string{"algoId": "", "algoClOrdId": get("algoClOrdId"), "clOrdId": "", "sCode": e.code, "sMsg": e.msg}}
		e.code, e.msg = "1", "All operations failed"
		return nil, e
	}
	return []any{map[string]string{"algoId": a.id, "algoClOrdId": a.clOrd, "clOrdId": "", "tag": "", "sCode": "0", "sMsg": "Order placed"}}, nil
}

func (s *Server) newAlgo(q *req, get fields) (*algo, *apiErr) {
	in, e := s.inst(get("instId"))
	if e != nil {
		return nil, e
	}
	mode := s.mode(q.key)
	if mode.acctLv == "1" {
		return nil, errf("51010", "You can't complete this request under your current account mode.")
	}
	side := get("side")
	if side != "buy" && side != "sell" {
		return nil, badParam("side")
	}
	cl := get("algoClOrdId")
	if cl == "" {
		cl = get("clOrdId")
	}
	if cl != "" && !clOrdPattern.MatchString(cl) {
		return nil, badParam("algoClOrdId")
	}
	if cl != "" {
		s.mu.Lock()
		for _, a := range s.algos {
			s.refresh(a)
			if a.key == q.key && a.clOrd == cl && a.state == "live" {
				s.mu.Unlock()
				return nil, errf("51065", "algoClOrdId already exists.")
			}
		}
		s.mu.Unlock()
	}
	sz, err := decimal.NewFromString(get("sz"))
	if err != nil || !sz.IsPositive() {
		return nil, badParam("sz")
	}
	if !sz.Mod(in.LotSz).IsZero() {
		return nil, errf("51121", "Order quantity must be a multiple of the lot size %s", in.LotSz)
	}
	price := func(name string) (decimal.Decimal, *apiErr) {
		if get(name) == "" {
			return decimal.Zero, nil
		}
		p, err := decimal.NewFromString(get(name))
		if err != nil || !p.IsPositive() {
			return p, badParam(name)
		}
		return p, nil
	}
	a := &algo{clOrd: cl, key: q.key, instID: in.InstID, ordType: get("ordType"), side: side, sz: sz,
		reduceOnly: get("reduceOnly") == "true", state: "live", cTime: ms(q.now)}
	if a.triggerPx, e = price("triggerPx"); e != nil {
		return nil, e
	}
	if a.tpPx, e = price("tpTriggerPx"); e != nil {
		return nil, e
	}
	if a.slPx, e = price("slTriggerPx"); e != nil {
		return nil, e
	}
	mark := func() decimal.Decimal { m, _ := s.eng.Market(in.InstID); return m.MarkPrice }()
	pside := paper.Side(strings.ToUpper(side))
	var legs []paper.OrderRequest
	leg := func(typ paper.OrderType, px decimal.Decimal, ordPx string) *apiErr {
		if ordPx != "-1" {
			return errf("51000", "The simulator only places market algo orders (orderPx, tpOrdPx, slOrdPx -1)")
		}
		legs = append(legs, paper.OrderRequest{Market: in.InstID, Side: pside, Type: typ, Size: sz.Mul(in.CtVal), TriggerPrice: px,
			ReduceOnly: a.reduceOnly, PositionLinked: get("cxlOnClosePos") == "true"})
		return nil
	}
	switch a.ordType {
	case "trigger":
		if a.triggerPx.IsZero() {
			return nil, badParam("triggerPx")
		}
		// A trigger order fires when the price reaches triggerPx from
		// either side: a stop for a sell below the mark, else a take-profit.
		typ := paper.StopMarket
		if (side == "sell") != a.triggerPx.LessThan(mark) {
			typ = paper.TakeProfitMarket
		}
		e = leg(typ, a.triggerPx, get("orderPx"))
	case "conditional", "oco":
		if a.tpPx.IsZero() && a.slPx.IsZero() {
			return nil, badParam("tpTriggerPx or slTriggerPx")
		}
		if a.ordType == "oco" && (a.tpPx.IsZero() || a.slPx.IsZero()) {
			return nil, badParam("tpTriggerPx and slTriggerPx")
		}
		if !a.tpPx.IsZero() {
			e = leg(paper.TakeProfitMarket, a.tpPx, get("tpOrdPx"))
		}
		if e == nil && !a.slPx.IsZero() {
			e = leg(paper.StopMarket, a.slPx, get("slOrdPx"))
		}
	default:
		return nil, badParam("ordType")
	}
	if e != nil {
		return nil, e
	}
	for _, l := range legs {
		o, err := s.eng.PlaceOrder(q.key, l)
		if err != nil {
			for _, pid := range a.paperIDs {
				_, _ = s.eng.CancelOrder(q.key, pid)
			}
			switch {
			case errors.Is(err, paper.ErrReduceOnly):
				return nil, errf("51169", "Order failed because you don't have any positions in this direction for this contract to reduce or close.")
			case errors.Is(err, paper.ErrInsufficientMargin):
				return nil, errf("51008", "Order failed. Insufficient USDT margin in account")
			}
			return nil, errf("51000", "%v", err)
		}
		a.paperIDs = append(a.paperIDs, o.ID)
	}
	s.mu.Lock()
	s.algoSeq++
	a.id = strconv.FormatInt(algoOffset+s.algoSeq, 10)
	s.algos[a.id] = a
	s.mu.Unlock()
	return a, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-algo-trading-post-cancel-algo-order
func (s *Server) cancelAlgos(q *req) (any, *apiErr) {
	gets, e := decodeArray(q.body, 10)
	if e != nil {
		return nil, e
	}
	items := make([]map[string]string, len(gets))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, get := range gets {
		items[i] = map[string]string{"algoId": get("algoId"), "sCode": "0", "sMsg": ""}
		a := s.algos[get("algoId")]
		if a != nil {
			s.refresh(a)
		}
		if a == nil || a.key != q.key || a.instID != get("instId") || a.state != "live" {
			items[i]["sCode"], items[i]["sMsg"] = "51400", "Cancellation failed as the order has been filled, canceled or does not exist."
			continue
		}
		for _, pid := range a.paperIDs {
			_, _ = s.eng.CancelOrder(q.key, pid)
		}
		a.state = "canceled"
	}
	return batchEnvelope(items), nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-algo-trading-get-algo-order-details
func (s *Server) algoDetails(q *req) (any, *apiErr) {
	id, cl := q.get("algoId"), q.get("algoClOrdId")
	if id == "" && cl == "" {
		return nil, errf("51000", "Parameter algoId or algoClOrdId error")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *algo
	for _, k := range sortedKeys(s.algos) { // the newest with that client id
		a := s.algos[k]
		if a.key == q.key && ((id != "" && a.id == id) || (id == "" && a.clOrd == cl)) {
			found = a
		}
	}
	if found == nil {
		return nil, errf("51603", "Order does not exist")
	}
	s.refresh(found)
	return []any{s.wireAlgo(found)}, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-algo-trading-get-algo-order-list
// ordType is required; newest first; after = algoId.
func (s *Server) algosPending(q *req) (any, *apiErr) {
	types := map[string]bool{}
	for _, t := range strings.Split(q.get("ordType"), ",") {
		if t != "" {
			types[t] = true
		}
	}
	if len(types) == 0 {
		return nil, errf("51000", "Parameter ordType error")
	}
	limit := 100
	if v := q.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, badParam("limit")
		}
		limit = n
	}
	after := q.get("after")
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]string{}
	keys := sortedKeys(s.algos)
	for i := len(keys) - 1; i >= 0 && len(out) < limit; i-- {
		a := s.algos[keys[i]]
		s.refresh(a)
		if a.key != q.key || a.state != "live" || !types[a.ordType] || (q.get("instId") != "" && a.instID != q.get("instId")) ||
			(after != "" && a.id >= after) {
			continue
		}
		out = append(out, s.wireAlgo(a))
	}
	return out, nil
}
