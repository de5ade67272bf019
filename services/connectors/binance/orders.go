package binance

import (
	"context"
	"net/http"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// placeAlgo sends one conditional order to the algo service (fact sheet
// §0 #1); its id is algo-<algoId>.
func (a *Adapter) placeAlgo(ctx context.Context, c connector.Credential, o connector.OrderRequest, typ string) (contract.StopOrderResult, error) {
	p := fapi.StopParams(o, typ, "triggerPrice").Add("algoType", "CONDITIONAL").Add("clientAlgoId", o.ClientOrderID)
	var res algoOrder
	err := a.c.Signed(ctx, c, http.MethodPost, prefix+"/algoOrder", p, 0, &res)
	return contract.StopOrderResult{OrderID: algoOrderID(int64(res.AlgoID)), Status: algoStatusFromWire(res.AlgoStatus),
		TriggerPrice: connector.OrDefault(res.TriggerPrice, o.TriggerPrice)}, err
}

// CancelOrder implements connector.Adapter. algo-<id> cancels on the algo
// service, a regular order by its symbol (fapi's CancelRegular).
func (a *Adapter) CancelOrder(ctx context.Context, c connector.Credential, id string, m *connector.Market) error {
	n, algo, err := parseOrderID(id)
	if err != nil {
		return err
	}
	if algo {
		return a.c.Signed(ctx, c, http.MethodDelete, prefix+"/algoOrder", connector.Query{}.Add("algoId", strconv.FormatInt(n, 10)), 1, nil)
	}
	return a.CancelRegular(ctx, c, n, m)
}

// CancelAllOrders implements connector.Adapter. Binance's cancel-alls
// return no count and each covers one kind of order (fact sheet §0 #4):
// the open orders of both kinds are counted first, then both are called.
func (a *Adapter) CancelAllOrders(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	regular, algos, err := a.openOrders(ctx, c, &m)
	if err != nil {
		return 0, err
	}
	for _, path := range []string{"/allOpenOrders", "/algoOpenOrders"} {
		if err := a.c.Signed(ctx, c, http.MethodDelete, prefix+path, fapi.SymbolParam(m), 1, nil); err != nil {
			return 0, err
		}
	}
	return len(regular) + len(algos), nil
}

// findAlgo is Query Algo Order by clientAlgoId, for stop and protection
// orders (the algo service's id space is separate); -2013 means Binance
// does not know the id.
func (a *Adapter) findAlgo(ctx context.Context, c connector.Credential, clientOrderID string) (connector.FoundOrder, bool, error) {
	var algo algoOrder
	err := a.c.Signed(ctx, c, http.MethodGet, prefix+"/algoOrder", connector.Query{}.Add("clientAlgoId", clientOrderID), 1, &algo)
	if fapi.IsCode(err, -2013) {
		return connector.FoundOrder{}, false, nil
	}
	if err != nil {
		return connector.FoundOrder{}, false, err
	}
	return connector.FoundOrder{Order: algoFromWire(algo), AvgPrice: decimal.Zero, Fee: decimal.Zero}, true, nil
}
