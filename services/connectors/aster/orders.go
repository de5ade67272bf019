package aster

import (
	"context"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// placeStop sends a conditional order: an ordinary order with stopPrice
// (fact sheet §0 #5). Its id is the orderId: Aster's OCO strategy
// answers no sub-order ids (fact sheet §4), so protection legs are two
// such orders the runtime watches.
func (a *Adapter) placeStop(ctx context.Context, c connector.Credential, o connector.OrderRequest, typ string) (contract.StopOrderResult, error) {
	res, err := a.Place(ctx, c, fapi.StopParams(o, typ, "stopPrice").Add("newClientOrderId", o.ClientOrderID))
	return contract.StopOrderResult{OrderID: strconv.FormatInt(int64(res.OrderID), 10), Status: fapi.OrderStatus(res),
		TriggerPrice: connector.OrDefault(res.StopPrice, o.TriggerPrice)}, err
}

// CancelOrder implements connector.Adapter, for regular and conditional
// orders alike (fapi's CancelRegular).
func (a *Adapter) CancelOrder(ctx context.Context, c connector.Credential, id string, m *connector.Market) error {
	n, err := parseOrderID(id)
	if err != nil {
		return err
	}
	return a.CancelRegular(ctx, c, n, m)
}
