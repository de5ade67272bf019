package paradex

import (
	"context"
	"net/http"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
)

// modifyBody is Modify order's body (PUT /orders/{id}): the order id and
// the whole order, signed again
// (https://docs.paradex.trade/api/prod/orders/modify).
type modifyBody struct {
	ID string `json:"id"`
	stark.OrderRequest
}

// Amendable implements connector.Amender: Paradex modifies open limit
// orders (price, size) and TPSL orders; the gateway's stops are
// STOP_MARKET orders, which it does not modify.
func (a *Adapter) Amendable(t connector.OrderType) []string {
	if t == connector.Limit {
		return []string{connector.FieldPrice, connector.FieldSize}
	}
	return nil
}

// ModifyOrder implements connector.Amender; the order keeps its id.
func (a *Adapter) ModifyOrder(ctx context.Context, c connector.Credential, am connector.Amendment) (contract.Order, error) {
	if !orderIDPattern.MatchString(am.OrderID) {
		return contract.Order{}, contract.Errorf(contract.CodeInvalidRequest, "field \"orderId\": %q is not a Paradex order id (a decimal number)", am.OrderID)
	}
	acct, err := decode(c)
	if err != nil {
		return contract.Order{}, err
	}
	b := modifyBody{ID: am.OrderID, OrderRequest: body(am.After)}
	b.ClientID, b.Instruction = "", "" // neither is part of a modification
	if err := a.sign(ctx, c, acct, &b.OrderRequest); err != nil {
		return contract.Order{}, err
	}
	var o orderResp
	if _, err := a.c.do(ctx, a.base(c), acct, request{method: http.MethodPut, path: "/orders/" + am.OrderID, body: b}, &o); err != nil {
		return contract.Order{}, err
	}
	return orderFromWire(o), nil
}
