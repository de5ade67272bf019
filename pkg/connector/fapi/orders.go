package fapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// BatchSize is how many orders POST batchOrders takes.
const BatchSize = 5

// LimitParams are New Order's parameters of a limit order; GTX is the
// post-only time in force.
func LimitParams(o connector.OrderRequest) connector.Query {
	p := SymbolParam(o.Market).Add("side", string(o.Side)).Add("type", "LIMIT").
		Add("quantity", FmtDec(o.Size)).Add("price", FmtDec(o.Price)).Add("timeInForce", timeInForce(o))
	if o.ReduceOnly {
		p = p.Add("reduceOnly", "true")
	}
	return p.Add("newClientOrderId", o.ClientOrderID)
}

func timeInForce(o connector.OrderRequest) string {
	if o.PostOnly {
		return "GTX"
	}
	return "GTC"
}

// PostOnlyExpired turns a GTX order the venue accepted but expired
// unfilled into the post-only rejection it is.
func (e Errors) PostOnlyExpired(o connector.OrderRequest, res Order) error {
	if o.PostOnly && res.Status == "EXPIRED" && res.ExecutedQty.IsZero() {
		return contract.Upstream(contract.ReasonPostOnlyRejected, "", "EXPIRED",
			"%s expired the post-only order %d: it would have taken liquidity", e.Venue, res.OrderID)
	}
	return nil
}

// MarketSize applies MARKET_LOT_SIZE when its step is coarser than
// LOT_SIZE's.
func MarketSize(meta SymbolMeta, m connector.Market, size decimal.Decimal) (decimal.Decimal, error) {
	step := meta.MarketStep
	if step.IsPositive() && step.GreaterThan(m.LotSize) {
		size = size.Sub(size.Mod(step))
		if !size.IsPositive() {
			return size, contract.Errorf(contract.CodeInvalidRequest, "size rounds to zero on %s: the market-order lot step is %s", m.Canonical, step)
		}
	}
	return size, nil
}

// BatchAnswer is one slot of the batch answer: an order, or {code, msg}
// with code a number or a string ("-2011" on Aster).
type BatchAnswer struct {
	Order
	Code connector.Int `json:"code"`
	Msg  string        `json:"msg"`
}

// PlaceBatch places limit orders with POST batchOrders, BatchSize a call:
// the venues place each on its own, not atomically, so each order reports
// its own outcome; once a call placed orders, a later call's failure
// answers only its own (venuekit.PlaceChunks). check refuses an order
// before anything is sent; ready runs once before the first call.
func (e Errors) PlaceBatch(ctx context.Context, signed Signed, path string, c connector.Credential, orders []connector.OrderRequest,
	check func(connector.OrderRequest) error, ready func() error) ([]contract.BatchOrderResult, error) {
	out, send := venuekit.Prechecked(orders, check)
	if len(send) == 0 {
		return out, nil
	}
	if err := ready(); err != nil {
		return nil, err
	}
	return venuekit.PlaceChunks(out, send, BatchSize, func(chunk []int) (bool, error) {
		items := make([]BatchItem, len(chunk))
		for j, i := range chunk {
			o := orders[i]
			items[j] = BatchItem{Symbol: o.Market.Native, Side: string(o.Side), Type: "LIMIT", Quantity: FmtDec(o.Size),
				Price: FmtDec(o.Price), TimeInForce: timeInForce(o), NewClientOrderID: o.ClientOrderID}
			if o.ReduceOnly {
				items[j].ReduceOnly = "true"
			}
		}
		body, err := json.Marshal(items)
		if err != nil {
			return false, err
		}
		var answers []BatchAnswer
		if err := signed(ctx, c, http.MethodPost, path, connector.Query{}.Add("batchOrders", string(body)), 5, &answers); err != nil {
			return false, err
		}
		for j, i := range chunk {
			out[i] = e.batchResult(orders[i], answers, j)
		}
		return venuekit.AnyPlaced(out, chunk), nil
	})
}

// batchResult reads slot j of a batch answer.
func (e Errors) batchResult(o connector.OrderRequest, answers []BatchAnswer, j int) contract.BatchOrderResult {
	if j >= len(answers) {
		return contract.BatchOrderResult{Status: contract.StatusRejected,
			Error: contract.Upstream(contract.ReasonUnknown, "", "", "%s's batch answer has no slot for this order", e.Venue)}
	}
	ans := answers[j]
	if (ans.Code != 0 && ans.Code != 200) || ans.OrderID == 0 {
		return contract.BatchOrderResult{Status: contract.StatusRejected, Error: e.Upstream(http.StatusBadRequest, int(ans.Code), ans.Msg)}
	}
	id := strconv.FormatInt(int64(ans.OrderID), 10)
	if err := e.PostOnlyExpired(o, ans.Order); err != nil {
		ce, _ := contract.AsError(err)
		return contract.BatchOrderResult{OrderID: id, Status: contract.StatusRejected, Error: ce}
	}
	return contract.BatchOrderResult{OrderID: id, Status: Status(ans.Status, ans.ExecutedQty.IsPositive())}
}

// LimitResult is placeLimitOrder's answer from New Order's: the venue's
// figures where it gave them, the request's where not.
func LimitResult(o connector.OrderRequest, res Order) contract.LimitOrderResult {
	return contract.LimitOrderResult{
		OrderID: strconv.FormatInt(int64(res.OrderID), 10),
		Market:  o.Market.Native,
		Side:    o.Side,
		Size:    connector.OrDefault(res.OrigQty, o.Size),
		Price:   connector.OrDefault(res.Price, o.Price),
		Status:  Status(res.Status, res.ExecutedQty.IsPositive()),
	}
}

// MarketParams are New Order's parameters of a market order of size.
func MarketParams(o connector.OrderRequest, size decimal.Decimal) connector.Query {
	p := SymbolParam(o.Market).Add("side", string(o.Side)).Add("type", "MARKET").Add("quantity", FmtDec(size))
	if o.ReduceOnly {
		p = p.Add("reduceOnly", "true")
	}
	return p.Add("newClientOrderId", o.ClientOrderID)
}

// Unfilled is the error for a market order the venue ended without a
// fill (no liquidity within its price protection), nil when it filled
// or still runs.
func (e Errors) Unfilled(res Order) error {
	if res.ExecutedQty.IsZero() && (res.Status == "EXPIRED" || res.Status == "CANCELED" || res.Status == "REJECTED") {
		return contract.Upstream(contract.ReasonInvalidOrder, "", res.Status,
			"%s ended market order %d %s without a fill (no liquidity within its price protection)", e.Venue, res.OrderID, res.Status)
	}
	return nil
}
