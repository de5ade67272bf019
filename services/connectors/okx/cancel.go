package okx

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// CancelOrder implements connector.Adapter. algo-<id> cancels with
// cancel-algos, anything else with cancel-order; both need the instrument,
// so without a market the pending orders are searched for it.
func (a *Adapter) CancelOrder(ctx context.Context, c connector.Credential, id string, m *connector.Market) error {
	oid, algo, err := parseOrderID(id)
	if err != nil {
		return err
	}
	instID := ""
	if m != nil {
		instID = m.Native
	} else {
		regular, algos, err := a.openOrders(ctx, c, nil)
		if err != nil {
			return err
		}
		for _, o := range regular {
			if !algo && o.OrdID == oid {
				instID = o.InstID
			}
		}
		for _, o := range algos {
			if algo && o.AlgoID == oid {
				instID = o.InstID
			}
		}
		if instID == "" {
			return contract.Upstream(contract.ReasonOrderNotFound, "", "", "no pending OKX order %s; give market to cancel it by instrument", id)
		}
	}
	if algo {
		return a.post(ctx, c, request{path: "/api/v5/trade/cancel-algos", body: []cancelAlgoItem{{AlgoID: oid, InstID: instID}},
			limit: rule{n: 20}}, nil)
	}
	return a.post(ctx, c, request{path: "/api/v5/trade/cancel-order", body: cancelItem{InstID: instID, OrdID: oid},
		limit: cancelRule, instID: instID}, nil)
}

// CancelAllOrders implements connector.Adapter. OKX has no cancel-all for
// swaps (fact sheet §0 #2): the pending regular and algo orders are listed
// and cancelled in batches of 20 and 10; the count is the orders OKX
// confirmed (sCode 0), not the orders asked for.
func (a *Adapter) CancelAllOrders(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	regular, algos, err := a.openOrders(ctx, c, &m)
	if err != nil {
		return 0, err
	}
	n := 0
	for start := 0; start < len(regular); start += batchSize {
		chunk := regular[start:min(start+batchSize, len(regular))]
		items := make([]cancelItem, len(chunk))
		for i, o := range chunk {
			items[i] = cancelItem{InstID: o.InstID, OrdID: o.OrdID}
		}
		var res []placed
		if err := a.post(ctx, c, request{path: "/api/v5/trade/cancel-batch-orders", body: items, items: true, limit: batchRule}, &res); err != nil {
			return n, err
		}
		n += confirmed(res)
	}
	for start := 0; start < len(algos); start += algoBatchSize {
		chunk := algos[start:min(start+algoBatchSize, len(algos))]
		items := make([]cancelAlgoItem, len(chunk))
		for i, o := range chunk {
			items[i] = cancelAlgoItem{AlgoID: o.AlgoID, InstID: o.InstID}
		}
		var res []placed
		if err := a.post(ctx, c, request{path: "/api/v5/trade/cancel-algos", body: items, items: true, limit: rule{n: 20}}, &res); err != nil {
			return n, err
		}
		n += confirmed(res)
	}
	return n, nil
}

func confirmed(res []placed) int {
	n := 0
	for _, r := range res {
		if r.SCode == "0" {
			n++
		}
	}
	return n
}
