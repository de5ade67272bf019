package sim

import (
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
)

// modifyOrder is Modify Order (PUT /fapi/v3/order): LIMIT orders only,
// side, quantity and price all mandatory; an unchanged order is -5027
// (https://github.com/asterdex/api-docs/blob/master/V3(Recommended)/EN/aster-finance-futures-api-v3.md, Modify Order).
func (s *Server) modifyOrder(q *req) (any, *apiErr) {
	for _, p := range []string{"side", "quantity", "price"} {
		if q.get(p) == "" {
			return nil, badParam(p)
		}
	}
	o, ok, e := s.lookup(q)
	if e != nil {
		return nil, e
	}
	if !ok || o.Status != paper.Open {
		return nil, errf(400, -2013, "Order does not exist.")
	}
	if o.Type != paper.Limit {
		return nil, errf(400, -4028, "Order type not supported for modification.")
	}
	if q.get("side") != string(o.Side) {
		return nil, errf(400, -4081, "Side does not match the order.")
	}
	m, _ := s.eng.Market(o.Market)
	qty, e := parseQty(q.get, m.LotSize)
	if e != nil {
		return nil, e
	}
	price, e := parsePrice(q.get, "price", m.TickSize)
	if e != nil {
		return nil, e
	}
	if qty.Equal(o.Size) && price.Equal(o.Price) {
		return nil, errf(400, -5027, "No need to modify the order.")
	}
	got, err := s.eng.AmendOrder(q.key, o.ID, paper.Amend{Size: qty, Price: price})
	if err != nil {
		return nil, errf(400, -2010, "%v", err)
	}
	return answer(got), nil
}

// countdownCancelAll is Auto-Cancel All Open Orders (POST
// /fapi/v3/countdownCancelAll): when countdownTime milliseconds pass
// without another call, every open order of the symbol is cancelled; 0
// stops the countdown
// (https://github.com/asterdex/api-docs/blob/master/V3(Recommended)/EN/aster-finance-futures-api-v3.md, Auto-Cancel All Open Orders).
func (s *Server) countdownCancelAll(q *req) (any, *apiErr) {
	m, e := s.market(q, true)
	if e != nil {
		return nil, e
	}
	ms, err := strconv.ParseInt(q.get("countdownTime"), 10, 64)
	if err != nil || ms < 0 {
		return nil, badParam("countdownTime")
	}
	key, sym := q.key, m.Symbol
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.countdowns == nil {
		s.countdowns = map[string]*time.Timer{}
	}
	if t := s.countdowns[key+" "+sym]; t != nil {
		t.Stop()
		delete(s.countdowns, key+" "+sym)
	}
	if ms > 0 {
		s.countdowns[key+" "+sym] = time.AfterFunc(time.Duration(ms)*time.Millisecond, func() { s.cancelSymbol(key, sym) })
	}
	return map[string]string{"symbol": sym, "countdownTime": strconv.FormatInt(ms, 10)}, nil
}

// cancelSymbol cancels every open order of key on sym, algo orders too.
func (s *Server) cancelSymbol(key, sym string) {
	open, _ := s.eng.OpenOrders(key, sym)
	for _, o := range open {
		_, _ = s.eng.CancelOrder(key, o.ID)
	}
}
