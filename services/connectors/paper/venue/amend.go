package venue

import (
	"context"
	"net/http"
	"net/url"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// AmendRequest changes an OPEN or PENDING order in place; absent (zero)
// fields stay. Size is the new total, filled part included.
type AmendRequest struct {
	Size         decimal.Decimal `json:"size,omitzero"`
	Price        decimal.Decimal `json:"price,omitzero"`
	TriggerPrice decimal.Decimal `json:"triggerPrice,omitzero"`
}

func (h *handler) amendOrder(r *http.Request) (any, error) {
	var req AmendRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	o, err := h.e.AmendOrder(r.PathValue("account"), r.PathValue("id"),
		paper.Amend{Size: req.Size, Price: req.Price, TriggerPrice: req.TriggerPrice})
	if err != nil {
		return nil, err
	}
	return order(o), nil
}

// AmendOrder changes an OPEN or PENDING order in place and returns it.
func (c *Client) AmendOrder(ctx context.Context, account, orderID string, req AmendRequest) (Order, error) {
	var out Order
	err := c.do(ctx, http.MethodPatch, accountPath(account, "/orders/"+url.PathEscape(orderID)), nil, req, &out)
	return out, err
}
