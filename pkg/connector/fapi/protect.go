package fapi

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// StopParams are a conditional order's parameters, triggered on the mark
// price (the default would be the last price); triggerKey names the
// trigger (stopPrice on New Order, triggerPrice on the algo service).
func StopParams(o connector.OrderRequest, typ, triggerKey string) connector.Query {
	p := SymbolParam(o.Market).Add("side", string(o.Side)).Add("type", typ).
		Add("quantity", FmtDec(o.Size)).Add(triggerKey, FmtDec(o.TriggerPrice)).Add("workingType", "MARK_PRICE")
	if o.ReduceOnly {
		p = p.Add("reduceOnly", "true")
	}
	return p
}

// PlaceStopOrder implements connector.Adapter. The venues tie the
// direction to the type: STOP_MARKET fires against the side (a buy
// rising), TAKE_PROFIT_MARKET with it, and either one already through its
// trigger is -2021, so the type follows the trigger's side of the mark
// (DESIGN §13).
func (pl *Placer) PlaceStopOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.StopOrderResult, error) {
	if err := pl.CheckID(o.ClientOrderID); err != nil {
		return contract.StopOrderResult{}, err
	}
	if err := pl.OneWay(ctx, c); err != nil {
		return contract.StopOrderResult{}, err
	}
	typ := "TAKE_PROFIT_MARKET"
	if o.StopAgainstSide() {
		typ = "STOP_MARKET"
	}
	res, err := pl.Conditional(ctx, c, o, typ)
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	return res, nil
}

// PlaceProtectionOrders implements connector.Adapter with two reduce-only
// conditional orders on the mark price, on the side that closes the
// position: TAKE_PROFIT_MARKET and STOP_MARKET. The venues do not link
// them (the runtime watches the pair); when the second leg fails the
// first is cancelled again.
func (pl *Placer) PlaceProtectionOrders(ctx context.Context, c connector.Credential, p connector.ProtectionRequest) (contract.ProtectionResult, error) {
	for _, leg := range []string{"-tp", "-sl"} {
		if err := pl.CheckID(p.ClientOrderID + leg); err != nil {
			return contract.ProtectionResult{}, err
		}
	}
	if err := pl.OneWay(ctx, c); err != nil {
		return contract.ProtectionResult{}, err
	}
	side := contract.Sell
	if p.PositionSide == contract.Short {
		side = contract.Buy
	}
	place := func(typ string, trigger decimal.Decimal, id string) (string, error) {
		res, err := pl.Conditional(ctx, c, connector.OrderRequest{Market: p.Market, Side: side, Size: p.Size,
			TriggerPrice: trigger, ReduceOnly: true, ClientOrderID: id}, typ)
		return res.OrderID, err
	}
	var res contract.ProtectionResult
	var err error
	if p.TakeProfit != nil {
		if res.TPOrderID, err = place("TAKE_PROFIT_MARKET", *p.TakeProfit, p.ClientOrderID+"-tp"); err != nil {
			return contract.ProtectionResult{}, err
		}
	}
	if p.StopLoss != nil {
		if res.SLOrderID, err = place("STOP_MARKET", *p.StopLoss, p.ClientOrderID+"-sl"); err != nil {
			if res.TPOrderID != "" {
				_ = pl.Cancel(context.WithoutCancel(ctx), c, res.TPOrderID, &p.Market)
			}
			return contract.ProtectionResult{}, err
		}
	}
	return res, nil
}
