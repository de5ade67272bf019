package okx

import (
	"context"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/shopspring/decimal"
)

// FindOrder implements connector.Adapter: order details by the derived
// clOrdId, then algo order details by algoClOrdId; a protection leg
// (-tp/-sl) whose pair went out as one oco order is found under the pair's
// id. 51603 means OKX does not know the id.
func (a *Adapter) FindOrder(ctx context.Context, c connector.Credential, m connector.Market, clientOrderID string) (connector.FoundOrder, bool, error) {
	im, err := a.inst(ctx, c, m.Native)
	if err != nil {
		return connector.FoundOrder{}, false, err
	}
	o, err := a.orderDetails(ctx, c, instParam(m).Add("clOrdId", clOrdID(clientOrderID)))
	if err == nil {
		f := connector.FoundOrder{Order: orderFromWire(o, im), AvgPrice: o.AvgPx.Decimal, Fee: o.Fee.Neg()}
		return f, true, nil
	}
	if !isCode(err, "51603") {
		return connector.FoundOrder{}, false, err
	}
	ids := []string{clOrdID(clientOrderID)}
	if base, ok := strings.CutSuffix(clientOrderID, "-tp"); ok {
		ids = append(ids, clOrdID(base))
	} else if base, ok := strings.CutSuffix(clientOrderID, "-sl"); ok {
		ids = append(ids, clOrdID(base))
	}
	for i, id := range ids {
		var algos []algoOrder
		err := a.get(ctx, c, "/api/v5/trade/order-algo", params{}.Add("algoClOrdId", id), rule{n: 20}, &algos)
		if isCode(err, "51603") || (err == nil && len(algos) == 0) {
			continue
		}
		if err != nil {
			return connector.FoundOrder{}, false, err
		}
		if i > 0 && algos[0].OrdType != "oco" {
			continue
		}
		return connector.FoundOrder{Order: algoFromWire(algos[0], im), AvgPrice: decimal.Zero, Fee: decimal.Zero}, true, nil
	}
	return connector.FoundOrder{}, false, nil
}
