package aster

import (
	"context"
	"net/http"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// placeStop sends a conditional order: an ordinary order with stopPrice
// (fact sheet §0 #5), triggered on the mark price (the default would be
// the last price).
func (a *Adapter) placeStop(ctx context.Context, c connector.Credential, m connector.Market, side contract.Side, typ string,
	size, trigger decimal.Decimal, reduceOnly bool, clientID string) (order, error) {
	p := symbolParam(m).Add("side", string(side)).Add("type", typ).
		Add("quantity", fmtDec(size)).Add("stopPrice", fmtDec(trigger)).Add("workingType", "MARK_PRICE")
	if reduceOnly {
		p = p.Add("reduceOnly", "true")
	}
	return a.Place(ctx, c, p.Add("newClientOrderId", clientID))
}

// PlaceStopOrder implements connector.Adapter. Aster ties the direction
// to the type: STOP_MARKET fires against the side (a buy rising),
// TAKE_PROFIT_MARKET with it, and either one already through its trigger
// is -2021, so the type follows the trigger's side of the mark (DESIGN §13).
func (a *Adapter) PlaceStopOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.StopOrderResult, error) {
	if err := checkClientID(o.ClientOrderID); err != nil {
		return contract.StopOrderResult{}, err
	}
	if err := a.modes.OneWay(ctx, c); err != nil {
		return contract.StopOrderResult{}, err
	}
	typ := "TAKE_PROFIT_MARKET"
	if o.StopAgainstSide() {
		typ = "STOP_MARKET"
	}
	res, err := a.placeStop(ctx, c, o.Market, o.Side, typ, o.Size, o.TriggerPrice, o.ReduceOnly, o.ClientOrderID)
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	return contract.StopOrderResult{
		OrderID:      strconv.FormatInt(int64(res.OrderID), 10),
		Status:       orderStatus(res),
		TriggerPrice: connector.OrDefault(res.StopPrice, o.TriggerPrice),
	}, nil
}

// PlaceBatchOrder implements connector.Adapter with POST /fapi/v3/batchOrders,
// five orders a call, each placed on its own (fapi PlaceBatch).
func (a *Adapter) PlaceBatchOrder(ctx context.Context, c connector.Credential, orders []connector.OrderRequest) ([]contract.BatchOrderResult, error) {
	return venueErrors.PlaceBatch(ctx, a.signed, "/fapi/v3/batchOrders", c, orders,
		func(o connector.OrderRequest) error { return checkClientID(o.ClientOrderID) },
		func() error { return a.modes.OneWay(ctx, c) })
}

// PlaceProtectionOrders implements connector.Adapter with two reduce-only
// conditional orders on the mark price: TAKE_PROFIT_MARKET and STOP_MARKET
// on the side that closes the position. They are not linked (Aster's OCO
// strategy answers no sub-order ids, fact sheet §4): the runtime watches
// the pair. When the second leg fails the first is cancelled again.
func (a *Adapter) PlaceProtectionOrders(ctx context.Context, c connector.Credential, p connector.ProtectionRequest) (contract.ProtectionResult, error) {
	return a.Protect(ctx, c, p, func(ctx context.Context, side contract.Side, typ string, trigger decimal.Decimal, id string) (string, error) {
		o, err := a.placeStop(ctx, c, p.Market, side, typ, p.Size, trigger, true, id)
		return strconv.FormatInt(int64(o.OrderID), 10), err
	}, func(ctx context.Context, id string) error { return a.CancelOrder(ctx, c, id, &p.Market) })
}

// CancelOrder implements connector.Adapter, for regular and conditional
// orders alike. An order needs its symbol (orderId is unique per symbol
// only); without a market the open orders are searched for it.
func (a *Adapter) CancelOrder(ctx context.Context, c connector.Credential, id string, m *connector.Market) error {
	n, err := parseOrderID(id)
	if err != nil {
		return err
	}
	sym := ""
	if m != nil {
		sym = m.Native
	} else {
		open, err := a.openOrders(ctx, c, nil)
		if err != nil {
			return err
		}
		for _, o := range open {
			if int64(o.OrderID) == n {
				sym = o.Symbol
			}
		}
		if sym == "" {
			return contract.Upstream(contract.ReasonOrderNotFound, "", "",
				"no open Aster order %d; give market to cancel it by symbol", n)
		}
	}
	return a.signed(ctx, c, http.MethodDelete, "/fapi/v3/order",
		params{}.Add("symbol", sym).Add("orderId", strconv.FormatInt(n, 10)), 1, nil)
}

// CancelAllOrders implements connector.Adapter. Aster's cancel-all returns
// no count (fact sheet §4): the open orders, conditional ones included,
// are counted first.
func (a *Adapter) CancelAllOrders(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	open, err := a.openOrders(ctx, c, &m)
	if err != nil {
		return 0, err
	}
	if err := a.signed(ctx, c, http.MethodDelete, "/fapi/v3/allOpenOrders", symbolParam(m), 1, nil); err != nil {
		return 0, err
	}
	return len(open), nil
}

// FindOrder implements connector.Adapter: Query Order by
// origClientOrderId finds regular and conditional orders alike; -2013
// means Aster does not know the id.
func (a *Adapter) FindOrder(ctx context.Context, c connector.Credential, m connector.Market, clientOrderID string) (connector.FoundOrder, bool, error) {
	if err := checkClientID(clientOrderID); err != nil {
		return connector.FoundOrder{}, false, nil // never sent: Aster would have refused it
	}
	var o order
	err := a.signed(ctx, c, http.MethodGet, "/fapi/v3/order", symbolParam(m).Add("origClientOrderId", clientOrderID), 1, &o)
	if isCode(err, -2013) {
		return connector.FoundOrder{}, false, nil
	}
	if err != nil {
		return connector.FoundOrder{}, false, err
	}
	found := connector.FoundOrder{Order: orderFromWire(o), AvgPrice: o.AvgPrice, Fee: decimal.Zero}
	if o.ExecutedQty.IsPositive() {
		if f, ferr := a.FillOf(ctx, c, m, o); ferr == nil {
			found.AvgPrice, found.Fee = connector.OrDefault(f.Price(m), o.AvgPrice), f.Fee
		}
	}
	return found, true, nil
}
