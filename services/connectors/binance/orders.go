package binance

import (
	"context"
	"net/http"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// placeAlgo sends one conditional order to the algo service, triggered on
// the mark price (the default would be the last price).
func (a *Adapter) placeAlgo(ctx context.Context, c connector.Credential, m connector.Market, side contract.Side, typ string,
	size, trigger decimal.Decimal, reduceOnly bool, clientID string) (algoOrder, error) {
	p := symbolParam(m).Add("side", string(side)).Add("algoType", "CONDITIONAL").Add("type", typ).
		Add("quantity", fmtDec(size)).Add("triggerPrice", fmtDec(trigger)).Add("workingType", "MARK_PRICE")
	if reduceOnly {
		p = p.Add("reduceOnly", "true")
	}
	var res algoOrder
	err := a.signed(ctx, c, http.MethodPost, "/fapi/v1/algoOrder", p.Add("clientAlgoId", clientID), 0, &res)
	return res, err
}

// PlaceStopOrder implements connector.Adapter with a conditional algo
// order (fact sheet §0 #1); its id is algo-<algoId>. Binance ties the
// direction to the type: STOP_MARKET fires against the side (a buy rising),
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
	res, err := a.placeAlgo(ctx, c, o.Market, o.Side, typ, o.Size, o.TriggerPrice, o.ReduceOnly, o.ClientOrderID)
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	return contract.StopOrderResult{
		OrderID:      algoOrderID(int64(res.AlgoID)),
		Status:       algoStatusFromWire(res.AlgoStatus),
		TriggerPrice: connector.OrDefault(res.TriggerPrice, o.TriggerPrice),
	}, nil
}

// PlaceBatchOrder implements connector.Adapter with POST /fapi/v1/batchOrders,
// five orders a call, each placed on its own (fapi PlaceBatch).
func (a *Adapter) PlaceBatchOrder(ctx context.Context, c connector.Credential, orders []connector.OrderRequest) ([]contract.BatchOrderResult, error) {
	return venueErrors.PlaceBatch(ctx, a.signed, "/fapi/v1/batchOrders", c, orders,
		func(o connector.OrderRequest) error { return checkClientID(o.ClientOrderID) },
		func() error { return a.modes.OneWay(ctx, c) })
}

// PlaceProtectionOrders implements connector.Adapter with two reduce-only
// algo orders on the mark price: TAKE_PROFIT_MARKET and STOP_MARKET on the
// side that closes the position. Binance does not link them (fact sheet
// §4). When the second leg fails the first is cancelled again.
func (a *Adapter) PlaceProtectionOrders(ctx context.Context, c connector.Credential, p connector.ProtectionRequest) (contract.ProtectionResult, error) {
	return a.Protect(ctx, c, p, func(ctx context.Context, side contract.Side, typ string, trigger decimal.Decimal, id string) (string, error) {
		o, err := a.placeAlgo(ctx, c, p.Market, side, typ, p.Size, trigger, true, id)
		return algoOrderID(int64(o.AlgoID)), err
	}, func(ctx context.Context, id string) error { return a.cancelAlgo(ctx, c, id) })
}

func (a *Adapter) cancelAlgo(ctx context.Context, c connector.Credential, id string) error {
	n, _, err := parseOrderID(id)
	if err != nil {
		return err
	}
	return a.signed(ctx, c, http.MethodDelete, "/fapi/v1/algoOrder", params{}.Add("algoId", strconv.FormatInt(n, 10)), 1, nil)
}

// CancelOrder implements connector.Adapter. algo-<id> cancels on the algo
// service. A regular order needs its symbol (orderId is unique per symbol
// only); without a market the open orders are searched for it.
func (a *Adapter) CancelOrder(ctx context.Context, c connector.Credential, id string, m *connector.Market) error {
	n, algo, err := parseOrderID(id)
	if err != nil {
		return err
	}
	if algo {
		return a.cancelAlgo(ctx, c, id)
	}
	sym := ""
	if m != nil {
		sym = m.Native
	} else {
		var open []order
		if err := a.signed(ctx, c, http.MethodGet, "/fapi/v1/openOrders", nil, 40, &open); err != nil {
			return err
		}
		for _, o := range open {
			if int64(o.OrderID) == n {
				sym = o.Symbol
			}
		}
		if sym == "" {
			return contract.Upstream(contract.ReasonOrderNotFound, "", "",
				"no open Binance order %d; give market to cancel it by symbol", n)
		}
	}
	return a.signed(ctx, c, http.MethodDelete, "/fapi/v1/order",
		params{}.Add("symbol", sym).Add("orderId", strconv.FormatInt(n, 10)), 1, nil)
}

// CancelAllOrders implements connector.Adapter. Binance's cancel-alls
// return no count and each covers one kind of order (fact sheet §0 #4):
// the open orders of both kinds are counted first, then both are called.
func (a *Adapter) CancelAllOrders(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	regular, algos, err := a.openOrders(ctx, c, &m)
	if err != nil {
		return 0, err
	}
	if err := a.signed(ctx, c, http.MethodDelete, "/fapi/v1/allOpenOrders", symbolParam(m), 1, nil); err != nil {
		return 0, err
	}
	if err := a.signed(ctx, c, http.MethodDelete, "/fapi/v1/algoOpenOrders", symbolParam(m), 1, nil); err != nil {
		return 0, err
	}
	return len(regular) + len(algos), nil
}

// FindOrder implements connector.Adapter: Query Order by origClientOrderId
// for limit and market orders, then Query Algo Order by clientAlgoId for
// stop and protection orders (the two id spaces are separate); -2013 from
// both means Binance does not know the id.
func (a *Adapter) FindOrder(ctx context.Context, c connector.Credential, m connector.Market, clientOrderID string) (connector.FoundOrder, bool, error) {
	if err := checkClientID(clientOrderID); err != nil {
		return connector.FoundOrder{}, false, nil // never sent: Binance would have refused it
	}
	var o order
	err := a.signed(ctx, c, http.MethodGet, "/fapi/v1/order", symbolParam(m).Add("origClientOrderId", clientOrderID), 1, &o)
	if err == nil {
		found := connector.FoundOrder{Order: orderFromWire(o), AvgPrice: o.AvgPrice, Fee: decimal.Zero}
		if o.ExecutedQty.IsPositive() {
			if f, ferr := a.FillOf(ctx, c, m, o); ferr == nil {
				found.AvgPrice, found.Fee = connector.OrDefault(f.Price(m), o.AvgPrice), f.Fee
			}
		}
		return found, true, nil
	}
	if !isCode(err, -2013) {
		return connector.FoundOrder{}, false, err
	}
	var algo algoOrder
	err = a.signed(ctx, c, http.MethodGet, "/fapi/v1/algoOrder", params{}.Add("clientAlgoId", clientOrderID), 1, &algo)
	if isCode(err, -2013) {
		return connector.FoundOrder{}, false, nil
	}
	if err != nil {
		return connector.FoundOrder{}, false, err
	}
	return connector.FoundOrder{Order: algoFromWire(algo), AvgPrice: decimal.Zero, Fee: decimal.Zero}, true, nil
}
