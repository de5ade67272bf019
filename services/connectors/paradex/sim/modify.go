package sim

import (
	"encoding/json"
	"net/http"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
	"github.com/shopspring/decimal"
)

// modifyBody is Modify order's body: the order id and the whole order,
// signed again (https://docs.paradex.trade/api/prod/orders/modify).
type modifyBody struct {
	ID string `json:"id"`
	stark.OrderRequest
}

// modify is PUT /v1/orders/{id}: an open limit order takes a new price
// and size and keeps its id; market, side and type stay.
func (s *Server) modify(q *req) (int, any, *apiErr) {
	var b modifyBody
	if err := json.Unmarshal(q.body, &b); err != nil {
		return 0, nil, errf(http.StatusBadRequest, "BINDING_ERROR", "%v", err)
	}
	id := q.r.PathValue("id")
	if b.ID != id {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "id %q differs from the order id of the path", b.ID)
	}
	s.mu.Lock()
	o := s.orders[id]
	s.mu.Unlock()
	if o == nil || o.Account != q.account {
		return 0, nil, errf(http.StatusNotFound, "ORDER_ID_NOT_FOUND", "order %s not found", id)
	}
	if e := s.checkSignature(q.account, b.OrderRequest); e != nil {
		return 0, nil, e
	}
	if e := s.validate(q, b.OrderRequest); e != nil {
		return 0, nil, e
	}
	if b.Market != o.Req.Market || b.Side != o.Req.Side || b.Type != o.Req.Type {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "only price, size and trigger_price can be modified")
	}
	if o.Req.Type != "LIMIT" {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "only limit and TPSL orders can be modified")
	}
	if row := s.view(o); row["status"] != "OPEN" {
		return 0, nil, errf(http.StatusBadRequest, "ORDER_IS_CLOSED", "order %s is not open", id)
	}
	size, _ := decimal.NewFromString(b.Size)
	price, _ := decimal.NewFromString(b.Price)
	if _, err := s.eng.AmendOrder(o.Account, o.PaperID, paper.Amend{Size: size, Price: price}); err != nil {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "%v", err)
	}
	s.mu.Lock()
	o.Req.Size, o.Req.Price = b.Size, b.Price
	s.mu.Unlock()
	return ok(s.view(o))
}
