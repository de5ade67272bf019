package sim

import (
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// amendBody is POST /v5/order/amend's body: qty, price (limit orders) and
// triggerPrice (conditional orders), each optional
// (https://bybit-exchange.github.io/docs/v5/order/amend-order).
type amendBody struct {
	Category     string `json:"category"`
	Symbol       string `json:"symbol"`
	OrderID      string `json:"orderId"`
	OrderLinkID  string `json:"orderLinkId"`
	Qty          string `json:"qty"`
	Price        string `json:"price"`
	TriggerPrice string `json:"triggerPrice"`
}

// amend is order/amend: an open order changed in place; the answer names
// it, as create does.
func (s *Server) amend(q *req) (any, *apiErr) {
	var b amendBody
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
	o := s.ownOrder(q.key, b.Symbol, b.OrderID, b.OrderLinkID)
	if o == nil {
		return nil, errf(110001, "Order does not exist.")
	}
	var a paper.Amend
	for _, f := range []struct {
		raw  string
		step decimal.Decimal
		dst  *decimal.Decimal
	}{{b.Qty, m.LotSize, &a.Size}, {b.Price, m.TickSize, &a.Price}, {b.TriggerPrice, m.TickSize, &a.TriggerPrice}} {
		if f.raw == "" {
			continue
		}
		v, err := decimal.NewFromString(f.raw)
		if err != nil || !v.IsPositive() || !v.Mod(f.step).IsZero() {
			return nil, errf(10001, "params error: %q is not on the step %s", f.raw, f.step)
		}
		*f.dst = v
	}
	cur, err := s.eng.Order(q.key, o.PaperID)
	if err != nil || (cur.Status != paper.Open && cur.Status != paper.Pending) {
		return nil, errf(110001, "Order does not exist.")
	}
	if (a.Size.IsZero() || a.Size.Equal(cur.Size)) && (a.Price.IsZero() || a.Price.Equal(cur.Price)) &&
		(a.TriggerPrice.IsZero() || a.TriggerPrice.Equal(cur.TriggerPrice)) {
		return nil, errf(10001, "The order remains unchanged as the parameters entered match the existing ones.")
	}
	po, err := s.eng.AmendOrder(q.key, o.PaperID, a)
	if err != nil {
		return nil, errf(110003, "%v", err)
	}
	return map[string]string{"orderId": o.ID, "orderLinkId": po.ClientOrderID}, nil
}

// ownOrder is key's order on symbol named by orderId, else orderLinkId;
// nil when there is none the engine took.
func (s *Server) ownOrder(key, symbol, id, link string) *bybitOrder {
	var o *bybitOrder
	if id != "" {
		s.mu.Lock()
		o = s.orders[id]
		s.mu.Unlock()
	} else if link != "" {
		o = s.findLink(key, link)
	}
	if o == nil || o.Key != key || o.Symbol != symbol || o.frozen != nil {
		return nil
	}
	return o
}
