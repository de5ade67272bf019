package bybit

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// amendBody is POST /v5/order/amend's body
// (https://bybit-exchange.github.io/docs/v5/order/amend-order): an
// unfilled or partially filled order changes its qty and price, a
// conditional one its qty and triggerPrice.
type amendBody struct {
	Category     string `json:"category"`
	Symbol       string `json:"symbol"`
	OrderID      string `json:"orderId"`
	Qty          string `json:"qty,omitempty"`
	Price        string `json:"price,omitempty"`
	TriggerPrice string `json:"triggerPrice,omitempty"`
}

// Amendable implements connector.Amender.
func (a *Adapter) Amendable(t connector.OrderType) []string {
	if t == connector.Stop {
		return []string{connector.FieldSize, connector.FieldTriggerPrice}
	}
	return []string{connector.FieldPrice, connector.FieldSize}
}

// ModifyOrder implements connector.Amender: order/amend answers ids only,
// so the order is read back by its id.
func (a *Adapter) ModifyOrder(ctx context.Context, c connector.Credential, am connector.Amendment) (contract.Order, error) {
	b := amendBody{Category: category, Symbol: am.After.Market.Native, OrderID: am.OrderID}
	if am.Changes(connector.FieldSize) {
		b.Qty = fmtDec(am.After.Size)
	}
	if am.Changes(connector.FieldPrice) {
		b.Price = fmtDec(am.After.Price)
	}
	if am.Changes(connector.FieldTriggerPrice) {
		b.TriggerPrice = fmtDec(am.After.TriggerPrice)
	}
	if _, err := a.post(ctx, c, "/v5/order/amend", b, nil); err != nil {
		return contract.Order{}, err
	}
	var res orders
	var read []contract.Order
	if err := a.get(ctx, c, "/v5/order/realtime", symbolQuery(am.After.Market).Add("orderId", am.OrderID), &res); err == nil {
		for _, o := range res.List {
			read = append(read, orderFromWire(o))
		}
	}
	return am.Amended(read), nil
}
