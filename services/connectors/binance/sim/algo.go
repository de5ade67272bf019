package sim

import (
	"sort"
	"strconv"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit/fapisim"
	"github.com/shopspring/decimal"
)

// refresh brings an algo order's status up to date with its paper order.
func (s *Server) refresh(a *algo) {
	if a.Status != "NEW" {
		return
	}
	o, err := s.eng.Order(a.Key, a.PaperID)
	if err != nil {
		a.Status = "CANCELED"
		return
	}
	switch o.Status {
	case paper.Filled:
		a.Status = "FINISHED"
	case paper.Cancelled:
		a.Status = "CANCELED"
	case paper.Rejected:
		a.Status = "REJECTED"
	}
}

// liveAlgos returns the account's waiting algo orders (on sym, or all),
// oldest first. Their Status changes under s.mu: read it there.
func (s *Server) liveAlgos(key, sym string) []*algo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveAlgosLocked(key, sym)
}

func (s *Server) liveAlgosLocked(key, sym string) []*algo {
	var out []*algo
	for _, a := range s.algos {
		if a.Key != key || (sym != "" && a.Symbol != sym) {
			continue
		}
		s.refresh(a)
		if a.Status == "NEW" {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (s *Server) newAlgo(q *req) (any, *apiErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	if q.Get("algoType") != "CONDITIONAL" {
		return nil, badParam("algoType")
	}
	side := q.Get("side")
	if side != "BUY" && side != "SELL" {
		return nil, errf(400, -1117, "Invalid side.")
	}
	typ := q.Get("type")
	if typ != "STOP_MARKET" && typ != "TAKE_PROFIT_MARKET" {
		return nil, errf(400, -1116, "Invalid orderType.")
	}
	if e := s.ModeCheck(q.Key, q.Get); e != nil {
		return nil, e
	}
	trigger, e := parsePrice(q.Get, "triggerPrice", m.TickSize)
	if e != nil {
		return nil, e
	}
	working := q.Get("workingType")
	switch working {
	case "":
		working = "CONTRACT_PRICE"
	case "MARK_PRICE", "CONTRACT_PRICE":
	default:
		return nil, errf(400, -1102, "Invalid workingType.")
	}
	reduceOnly := q.Get("reduceOnly") == "true"
	var qty decimal.Decimal
	if q.Get("closePosition") == "true" {
		ps, _ := s.eng.Positions(q.Key, m.Symbol)
		if len(ps) == 0 {
			return nil, errf(400, -2022, "ReduceOnly Order is rejected.")
		}
		qty, reduceOnly = ps[0].Size, true
	} else if qty, e = parseQty(q.Get, m.LotSize); e != nil {
		return nil, e
	}
	if immediate(typ, side, m.MarkPrice, trigger) {
		return nil, errf(400, -2021, "Order would immediately trigger.")
	}
	clientID, e := s.algoClientID(q.Key, q.Get("clientAlgoId"))
	if e != nil {
		return nil, e
	}
	o, err := s.eng.PlaceOrder(q.Key, paper.OrderRequest{Market: m.Symbol, Side: paper.Side(side), Type: paper.OrderType(typ),
		Size: qty, TriggerPrice: trigger, ReduceOnly: reduceOnly})
	if err != nil {
		return nil, fapisim.PlacementError(err, m)
	}
	s.mu.Lock()
	s.algoSeq++
	a := &algo{ID: s.algoSeq, ClientID: clientID, Key: q.Key, Symbol: m.Symbol, Side: side, Type: typ, Qty: o.Size,
		Trigger: trigger, ReduceOnly: reduceOnly, WorkingType: working, PaperID: o.ID, Created: q.Now.UnixMilli(), Status: "NEW"}
	s.algos[a.ID] = a
	w := a.wire() // a cancel may change it as soon as the lock is gone
	s.mu.Unlock()
	return w, nil
}

func (s *Server) cancelAlgo(q *req) (any, *apiErr) {
	id, _ := strconv.ParseInt(q.Get("algoId"), 10, 64)
	cid := q.Get("clientAlgoId")
	if id == 0 && cid == "" {
		return nil, errf(400, -1102, "Either algoId or clientAlgoId must be sent.")
	}
	for _, a := range s.liveAlgos(q.Key, "") {
		if (id != 0 && a.ID == id) || (id == 0 && a.ClientID == cid) {
			if _, err := s.eng.CancelOrder(q.Key, a.PaperID); err != nil {
				break
			}
			s.mu.Lock()
			a.Status = "CANCELED"
			s.mu.Unlock()
			return map[string]any{"algoId": a.ID, "clientAlgoId": a.ClientID, "code": "200", "msg": "success"}, nil
		}
	}
	return nil, errf(400, -2011, "Unknown order sent.")
}

func (s *Server) cancelAllAlgos(q *req) (any, *apiErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	for _, a := range s.liveAlgos(q.Key, m.Symbol) {
		if _, err := s.eng.CancelOrder(q.Key, a.PaperID); err == nil {
			s.mu.Lock()
			a.Status = "CANCELED"
			s.mu.Unlock()
		}
	}
	return s.CancelAllDone(), nil
}

func (s *Server) openAlgos(q *req) (any, *apiErr) {
	m, e := s.Market(q, false)
	if e != nil {
		return nil, e
	}
	out := []wireAlgo{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.liveAlgosLocked(q.Key, m.Symbol) {
		out = append(out, a.wire())
	}
	return out, nil
}

// queryAlgo is Query Algo Order (GET /fapi/v1/algoOrder, by algoId or
// clientAlgoId, any status). Binance answers an unknown algo order like an
// unknown regular one, -2013 "Order does not exist." (fact sheet §4; the
// query mirrors Query Order: https://developers.binance.com/docs/derivatives/usds-margined-futures/trade/rest-api/Query-Order).
func (s *Server) queryAlgo(q *req) (any, *apiErr) {
	id, _ := strconv.ParseInt(q.Get("algoId"), 10, 64)
	cid := q.Get("clientAlgoId")
	if id == 0 && cid == "" {
		return nil, errf(400, -1102, "Either algoId or clientAlgoId must be sent.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *algo
	for _, a := range s.algos {
		if a.Key == q.Key && ((id != 0 && a.ID == id) || (id == 0 && a.ClientID == cid)) && (found == nil || a.ID > found.ID) {
			found = a
		}
	}
	if found == nil {
		return nil, errf(400, -2013, "Order does not exist.")
	}
	s.refresh(found)
	return found.wire(), nil
}
