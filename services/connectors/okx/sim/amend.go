package sim

import (
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// amendOrder is Amend order (POST /api/v5/trade/amend-order): newSz in
// contracts (the total, filled part included) and newPx for a pending
// regular order
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-amend-order).
func (s *Server) amendOrder(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	failed := func(code, msg string) *apiErr {
		return &apiErr{status: 200, code: "1", msg: "All operations failed", data: []any{map[string]string{
			"ordId": get("ordId"), "clOrdId": get("clOrdId"), "reqId": get("reqId"), "sCode": code, "sMsg": msg}}}
	}
	if get("newSz") == "" && get("newPx") == "" {
		return nil, errf("51000", "Parameter newSz or newPx error")
	}
	w, o, live, e := s.lookupOrder(q.key, get)
	if e != nil || !live || o.Status != paper.Open || o.Type != paper.Limit {
		return nil, failed("51503", "Order modification failed as the order has been filled, canceled or does not exist.")
	}
	in, _ := s.inst(get("instId"))
	var a paper.Amend
	if v := get("newSz"); v != "" {
		sz, err := decimal.NewFromString(v)
		if err != nil || !sz.IsPositive() || !sz.Mod(in.LotSz).IsZero() {
			return nil, failed("51000", "Parameter newSz error")
		}
		a.Size = sz.Mul(in.CtVal)
	}
	if v := get("newPx"); v != "" {
		px, err := decimal.NewFromString(v)
		if err != nil || !px.IsPositive() || !px.Mod(in.TickSz).IsZero() {
			return nil, failed("51000", "Parameter newPx error")
		}
		a.Price = px
	}
	if _, err := s.eng.AmendOrder(q.key, o.ID, a); err != nil {
		return nil, failed("51503", err.Error())
	}
	return []any{map[string]string{"ordId": w["ordId"], "clOrdId": w["clOrdId"], "reqId": get("reqId"), "sCode": "0", "sMsg": ""}}, nil
}

// cancelAllAfter is Cancel All After (POST
// /api/v5/trade/cancel-all-after): timeOut 0 or 10-120 seconds; when it
// passes without another call every pending order of the account is
// cancelled
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-cancel-all-after).
func (s *Server) cancelAllAfter(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	n, err := strconv.Atoi(get("timeOut"))
	if err != nil || (n != 0 && (n < 10 || n > 120)) {
		return nil, errf("51000", "Parameter timeOut error")
	}
	key := q.key
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.after == nil {
		s.after = map[string]*time.Timer{}
	}
	if t := s.after[key]; t != nil {
		t.Stop()
		delete(s.after, key)
	}
	trigger := "0"
	if n > 0 {
		s.after[key] = time.AfterFunc(time.Duration(n)*time.Second, func() {
			open, _ := s.eng.OpenOrders(key, "")
			for _, o := range open {
				if o.Type == paper.Limit {
					_, _ = s.eng.CancelOrder(key, o.ID)
				}
			}
		})
		trigger = strconv.FormatInt(q.now.Add(time.Duration(n)*time.Second).UnixMilli(), 10)
	}
	return []any{map[string]string{"triggerTime": trigger, "tag": "", "ts": strconv.FormatInt(q.now.UnixMilli(), 10)}}, nil
}

// amendAlgo is Amend algo order (POST /api/v5/trade/amend-algos) for a
// live trigger order: newSz in contracts and newTriggerPx
// (https://www.okx.com/docs-v5/en/#order-book-trading-algo-trading-post-amend-algo-order).
func (s *Server) amendAlgo(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	in, e := s.inst(get("instId"))
	if e != nil {
		return nil, e
	}
	failed := func(code, msg string) *apiErr {
		return &apiErr{status: 200, code: "1", msg: "All operations failed", data: []any{map[string]string{
			"algoId": get("algoId"), "algoClOrdId": get("algoClOrdId"), "reqId": get("reqId"), "sCode": code, "sMsg": msg}}}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.algos[get("algoId")]
	if a != nil {
		s.refresh(a)
	}
	if a == nil || a.key != q.key || a.instID != in.InstID || a.state != "live" || a.ordType != "trigger" || len(a.paperIDs) != 1 {
		return nil, failed("51503", "Order modification failed as the order has been filled, canceled or does not exist.")
	}
	var am paper.Amend
	sz, px := a.sz, a.triggerPx
	if v := get("newSz"); v != "" {
		n, err := decimal.NewFromString(v)
		if err != nil || !n.IsPositive() || !n.Mod(in.LotSz).IsZero() {
			return nil, failed("51000", "Parameter newSz error")
		}
		sz, am.Size = n, n.Mul(in.CtVal)
	}
	if v := get("newTriggerPx"); v != "" {
		n, err := decimal.NewFromString(v)
		if err != nil || !n.IsPositive() || !n.Mod(in.TickSz).IsZero() {
			return nil, failed("51000", "Parameter newTriggerPx error")
		}
		px, am.TriggerPrice = n, n
	}
	if _, err := s.eng.AmendOrder(a.key, a.paperIDs[0], am); err != nil {
		return nil, failed("51503", err.Error())
	}
	a.sz, a.triggerPx = sz, px
	return []any{map[string]string{"algoId": a.id, "algoClOrdId": a.clOrd, "reqId": get("reqId"), "sCode": "0", "sMsg": ""}}, nil
}
