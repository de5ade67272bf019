package okx

import (
	"context"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Batch sizes (fact sheet §0 #2, §5): orders per batch-orders and
// cancel-batch-orders call, algo orders per cancel-algos call.
const (
	batchSize     = 20
	algoBatchSize = 10
)

// Request budgets of the trading endpoints, per 2 s (fact sheet §9).
var (
	placeRule  = rule{n: 60, byInst: true}
	batchRule  = rule{n: 15} // 300 orders / 2 s in calls of up to 20
	algoRule   = rule{n: 20, byInst: true}
	cancelRule = rule{n: 60, byInst: true}
	detailRule = rule{n: 60, byInst: true}
)

// postOnlyWaits are the pauses before each read of a post-only order: OKX
// accepts a post-only order that would take liquidity and then cancels it
// with cancelSource 31 (fact sheet §3), so the outcome is read back, for
// at most their sum (under 1 s).
var postOnlyWaits = []time.Duration{0, 150 * time.Millisecond, 350 * time.Millisecond}

// fillWaits are the pauses before each read of a market order: its fills
// can trail the placement answer by a moment.
var fillWaits = []time.Duration{0, 100 * time.Millisecond, 400 * time.Millisecond}

// sized converts an order's base-unit size to contracts and refuses a
// size that leaves less than the minimum.
func sized(o connector.OrderRequest, im instMeta) (decimal.Decimal, error) {
	sz := im.contracts(o.Size)
	if !sz.IsPositive() || sz.LessThan(im.minSz) {
		return sz, contract.Errorf(contract.CodeInvalidRequest,
			"size %s is below one lot of %s: OKX trades %s in contracts of %s %s, at least %s contracts (%s %s)",
			o.Size, o.Market.Canonical, o.Market.Native, im.ctVal, o.Market.Base, im.minSz, im.base(im.minSz), o.Market.Base)
	}
	return sz, nil
}

func orderBodyOf(o connector.OrderRequest, sz decimal.Decimal) orderBody {
	b := orderBody{InstID: o.Market.Native, TdMode: "cross", Side: sideToWire(o.Side), Sz: fmtDec(sz),
		ClOrdID: clOrdID(o.ClientOrderID), ReduceOnly: o.ReduceOnly}
	switch {
	case o.Type == connector.MarketType:
		b.OrdType = "market"
	case o.PostOnly:
		b.OrdType, b.Px = "post_only", fmtDec(o.Price)
	default:
		b.OrdType, b.Px = "limit", fmtDec(o.Price)
	}
	return b
}

// place sends one regular order and returns OKX's ids. 51010 means the
// account mode changed under us: the cached configuration is dropped so
// the next order asks again.
func (a *Adapter) place(ctx context.Context, c connector.Credential, b orderBody) (placed, error) {
	var res []placed
	err := a.post(ctx, c, request{path: "/api/v5/trade/order", body: b, limit: placeRule, instID: b.InstID, expires: true}, &res)
	if isCode(err, "51010") {
		a.forgetConfig(c)
	}
	if err != nil {
		return placed{}, err
	}
	if len(res) == 0 || res[0].OrdID == "" {
		return placed{}, contract.Upstream(contract.ReasonUnknown, "", "", "OKX accepted the order without an ordId")
	}
	return res[0], nil
}

// PlaceLimitOrder implements connector.Adapter. A post-only order is read
// back (postOnlyOutcome): OKX answers it like any other and cancels it
// afterwards when it would have taken liquidity.
func (a *Adapter) PlaceLimitOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.LimitOrderResult, error) {
	if err := a.tradable(ctx, c); err != nil {
		return contract.LimitOrderResult{}, err
	}
	im, err := a.inst(ctx, c, o.Market.Native)
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	sz, err := sized(o, im)
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	res, err := a.place(ctx, c, orderBodyOf(o, sz))
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	out := contract.LimitOrderResult{OrderID: res.OrdID, Market: o.Market.Native, Side: o.Side, Size: im.base(sz),
		Price: o.Price, Status: contract.StatusOpen}
	if o.PostOnly {
		status, err := a.postOnlyOutcome(ctx, c, o.Market.Native, res.OrdID)
		if err != nil {
			return contract.LimitOrderResult{}, err
		}
		out.Status = status
	}
	return out, nil
}

// postOnlyOutcome reads a placed post-only order back until it is no
// longer live or postOnlyWaits are spent. Cancelled with cancelSource 31
// is POST_ONLY_REJECTED; still live is OPEN.
func (a *Adapter) postOnlyOutcome(ctx context.Context, c connector.Credential, instID, ordID string) (string, error) {
	for _, d := range postOnlyWaits {
		if d > 0 {
			if err := a.c.Wait(ctx, d); err != nil {
				return "", err
			}
		}
		o, err := a.orderDetails(ctx, c, params{}.Add("instId", instID).Add("ordId", ordID))
		if isCode(err, "51603") {
			continue // not visible yet
		}
		if err != nil {
			return contract.StatusOpen, nil // it was accepted; the client can read it
		}
		if err := postOnlyRejected(o); err != nil {
			return "", err
		}
		if o.State != "live" {
			return statusFromWire(o.State, o.CancelSource, o.AccFillSz.IsPositive()), nil
		}
	}
	return contract.StatusOpen, nil
}

// postOnlyRejected is POST_ONLY_REJECTED for an order OKX cancelled
// because, post-only, it would have taken liquidity.
func postOnlyRejected(o order) error {
	if (o.State == "canceled" || o.State == "mmp_canceled") && o.CancelSource == cancelPostOnly {
		return contract.Upstream(contract.ReasonPostOnlyRejected, "", "cancelSource=31",
			"OKX cancelled post-only order %s: it would have taken liquidity (cancelSource 31); place it at a price that rests on the book", o.OrdID)
	}
	return nil
}

func (a *Adapter) orderDetails(ctx context.Context, c connector.Credential, q params) (order, error) {
	var os []order
	if err := a.get(ctx, c, "/api/v5/trade/order", q, detailRule, &os); err != nil {
		return order{}, err
	}
	if len(os) == 0 {
		return order{}, contract.Upstream(contract.ReasonOrderNotFound, "51603", "", "OKX does not know the order")
	}
	return os[0], nil
}

// execution is what a placed order executed, in contracts.
type execution struct {
	size, notional, fee decimal.Decimal // fee as cost (OKX's sign flipped)
}

// price is the size-weighted average price, to four more decimals than
// the market's tick.
func (e execution) price(m connector.Market) decimal.Decimal {
	if !e.size.IsPositive() {
		return decimal.Zero
	}
	return e.notional.DivRound(e.size, max(8, -m.TickSize.Exponent()+4))
}

// executed reads back what an order executed from its details (avgPx,
// accFillSz, fee: placement answers only ids, fact sheet §0 #3), again
// while it is still live; filled is false when it ended without a fill.
func (a *Adapter) executed(ctx context.Context, c connector.Credential, instID, ordID string) (execution, order, error) {
	var o order
	var err error
	for _, d := range fillWaits {
		if d > 0 {
			if err := a.c.Wait(ctx, d); err != nil {
				return execution{}, o, err
			}
		}
		o, err = a.orderDetails(ctx, c, params{}.Add("instId", instID).Add("ordId", ordID))
		if isCode(err, "51603") {
			continue
		}
		if err != nil {
			return execution{}, o, err
		}
		if o.State != "live" && o.State != "partially_filled" {
			break
		}
	}
	if err != nil {
		return execution{}, o, err
	}
	return execution{size: o.AccFillSz.Decimal, notional: o.AccFillSz.Mul(o.AvgPx.Decimal), fee: o.Fee.Neg()}, o, nil
}

// PlaceMarketOrder implements connector.Adapter. OKX answers ids only, so
// size, average price and fee are read back from the order (fact sheet
// §0 #3); OKX's fee is negative when paid, ours positive.
func (a *Adapter) PlaceMarketOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.MarketOrderResult, error) {
	if err := a.tradable(ctx, c); err != nil {
		return contract.MarketOrderResult{}, err
	}
	im, err := a.inst(ctx, c, o.Market.Native)
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	sz, err := sized(o, im)
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	if im.maxMktSz.IsPositive() && sz.GreaterThan(im.maxMktSz) {
		return contract.MarketOrderResult{}, contract.Errorf(contract.CodeInvalidRequest,
			"size %s is above OKX's largest market order on %s, %s %s; split it", o.Size, o.Market.Canonical, im.base(im.maxMktSz), o.Market.Base)
	}
	res, err := a.place(ctx, c, orderBodyOf(o, sz))
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	out := contract.MarketOrderResult{OrderID: res.OrdID, Market: o.Market.Native, Side: o.Side,
		FilledPrice: decimal.Zero, FilledSize: decimal.Zero, Fee: decimal.Zero}
	e, od, err := a.executed(ctx, c, o.Market.Native, res.OrdID)
	if err != nil {
		return contract.MarketOrderResult{}, connector.FillUnread("OKX", res.OrdID, err)
	}
	if e.size.IsZero() && (od.State == "canceled" || od.State == "mmp_canceled") {
		return out, contract.Upstream(contract.ReasonInvalidOrder, "", "state=canceled cancelSource="+od.CancelSource,
			"OKX cancelled market order %s without a fill (no liquidity within its price limit)", res.OrdID)
	}
	out.FilledSize, out.FilledPrice, out.Fee = im.base(e.size), e.price(o.Market), e.fee
	return out, nil
}

// placeAlgo sends one algo order and returns its algoId.
func (a *Adapter) placeAlgo(ctx context.Context, c connector.Credential, b algoBody) (string, error) {
	var res []placed
	err := a.post(ctx, c, request{path: "/api/v5/trade/order-algo", body: b, limit: algoRule, instID: b.InstID}, &res)
	if isCode(err, "51010") {
		a.forgetConfig(c)
	}
	if err != nil {
		return "", err
	}
	if len(res) == 0 || res[0].AlgoID == "" {
		return "", contract.Upstream(contract.ReasonUnknown, "", "", "OKX accepted the algo order without an algoId")
	}
	return res[0].AlgoID, nil
}

// PlaceStopOrder implements connector.Adapter with a trigger algo order
// that sends a market order (orderPx -1) when the mark price reaches the
// trigger (fact sheet §5); its id is algo-<algoId>.
func (a *Adapter) PlaceStopOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.StopOrderResult, error) {
	if err := a.tradable(ctx, c); err != nil {
		return contract.StopOrderResult{}, err
	}
	im, err := a.inst(ctx, c, o.Market.Native)
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	sz, err := sized(o, im)
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	id, err := a.placeAlgo(ctx, c, algoBody{InstID: o.Market.Native, TdMode: "cross", Side: sideToWire(o.Side), OrdType: "trigger",
		Sz: fmtDec(sz), TriggerPx: fmtDec(o.TriggerPrice), OrderPx: "-1", TriggerPxType: "mark", ReduceOnly: o.ReduceOnly,
		AlgoClOrdID: clOrdID(o.ClientOrderID)})
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	return contract.StopOrderResult{OrderID: algoPrefix + id, Status: contract.StatusPending, TriggerPrice: o.TriggerPrice}, nil
}

// PlaceBatchOrder implements connector.Adapter with batch-orders, 20
// orders a call, each placed on its own (not atomic: fact sheet §5) with
// its own sCode. Post-only orders are checked once after a short wait
// (batchPostOnly). Once a call has placed orders, a later call's failure
// rejects (or leaves UNKNOWN) only its own orders.
func (a *Adapter) PlaceBatchOrder(ctx context.Context, c connector.Credential, orders []connector.OrderRequest) ([]contract.BatchOrderResult, error) {
	out := make([]contract.BatchOrderResult, len(orders))
	if err := a.tradable(ctx, c); err != nil {
		return nil, err
	}
	var send []int
	bodies := make([]orderBody, len(orders))
	for i, o := range orders {
		im, err := a.inst(ctx, c, o.Market.Native)
		if err == nil {
			var sz decimal.Decimal
			if sz, err = sized(o, im); err == nil {
				bodies[i] = orderBodyOf(o, sz)
				send = append(send, i)
				continue
			}
		}
		ce, ok := contract.AsError(err)
		if !ok {
			return nil, err
		}
		out[i] = contract.BatchOrderResult{Status: contract.StatusRejected, Error: ce}
	}
	out, err := venuekit.PlaceChunks(out, send, batchSize, func(chunk []int) (bool, error) {
		items := make([]orderBody, len(chunk))
		for j, i := range chunk {
			items[j] = bodies[i]
		}
		var answers []placed
		if err := a.post(ctx, c, request{path: "/api/v5/trade/batch-orders", body: items, items: true, limit: batchRule, expires: true}, &answers); err != nil {
			return false, err
		}
		placedAny := false
		for j, i := range chunk {
			if j >= len(answers) {
				out[i] = contract.BatchOrderResult{Status: contract.StatusUnknown,
					Error: contract.Upstream(contract.ReasonUnknown, "", "", "OKX's batch answer has no slot for this order")}
				continue
			}
			ans := answers[j]
			if ans.SCode != "0" || ans.OrdID == "" {
				out[i] = contract.BatchOrderResult{Status: contract.StatusRejected, Error: upstreamError(200, string(ans.SCode), ans.SMsg)}
				continue
			}
			placedAny = true
			out[i] = contract.BatchOrderResult{OrderID: ans.OrdID, Status: contract.StatusOpen}
		}
		return placedAny, nil
	})
	if err != nil {
		return nil, err
	}
	return out, a.batchPostOnly(ctx, c, orders, out)
}

// batchPostOnly settles the post-only orders of a batch after one wait:
// an order still pending rests (OPEN); any other is read and a
// cancelSource 31 becomes POST_ONLY_REJECTED in its slot.
func (a *Adapter) batchPostOnly(ctx context.Context, c connector.Credential, orders []connector.OrderRequest, out []contract.BatchOrderResult) error {
	byInst := map[string][]int{}
	for i, o := range orders {
		if o.PostOnly && out[i].Status == contract.StatusOpen {
			byInst[o.Market.Native] = append(byInst[o.Market.Native], i)
		}
	}
	if len(byInst) == 0 {
		return nil
	}
	if err := a.c.Wait(ctx, postOnlyWaits[1]); err != nil {
		return nil // placed; the slots stay OPEN
	}
	for instID, idx := range byInst {
		m := orders[idx[0]].Market
		regular, err := a.pendingRegular(ctx, c, &m)
		if err != nil {
			continue
		}
		pending := map[string]bool{}
		for _, o := range regular {
			pending[o.OrdID] = true
		}
		for _, i := range idx {
			if pending[out[i].OrderID] {
				continue
			}
			o, err := a.orderDetails(ctx, c, params{}.Add("instId", instID).Add("ordId", out[i].OrderID))
			if err != nil {
				continue
			}
			if err := postOnlyRejected(o); err != nil {
				ce, _ := contract.AsError(err)
				out[i].Status, out[i].Error = contract.StatusRejected, ce
				continue
			}
			out[i].Status = statusFromWire(o.State, o.CancelSource, o.AccFillSz.IsPositive())
		}
	}
	return nil
}

// PlaceProtectionOrders implements connector.Adapter. A TP+SL pair is one
// oco algo order, linked by OKX (a conditional order with both prices
// would run only the SL on a net position: fact sheet §0 #9); its algoId
// is both tpOrderId and slOrderId. A single leg is a conditional order.
// Both trigger on the mark price, market on trigger, reduce-only and
// cancelled with the position (cxlOnClosePos).
func (a *Adapter) PlaceProtectionOrders(ctx context.Context, c connector.Credential, p connector.ProtectionRequest) (contract.ProtectionResult, error) {
	if err := a.tradable(ctx, c); err != nil {
		return contract.ProtectionResult{}, err
	}
	im, err := a.inst(ctx, c, p.Market.Native)
	if err != nil {
		return contract.ProtectionResult{}, err
	}
	sz, err := sized(connector.OrderRequest{Market: p.Market, Size: p.Size}, im)
	if err != nil {
		return contract.ProtectionResult{}, err
	}
	side := contract.Sell
	if p.PositionSide == contract.Short {
		side = contract.Buy
	}
	b := algoBody{InstID: p.Market.Native, TdMode: "cross", Side: sideToWire(side), OrdType: "conditional", Sz: fmtDec(sz),
		ReduceOnly: true, CxlOnClosePos: true}
	if p.TakeProfit != nil {
		b.TpTriggerPx, b.TpOrdPx, b.TpTriggerPxType = fmtDec(*p.TakeProfit), "-1", "mark"
	}
	if p.StopLoss != nil {
		b.SlTriggerPx, b.SlOrdPx, b.SlTriggerPxType = fmtDec(*p.StopLoss), "-1", "mark"
	}
	switch {
	case p.TakeProfit != nil && p.StopLoss != nil:
		b.OrdType, b.AlgoClOrdID = "oco", clOrdID(p.ClientOrderID)
	case p.TakeProfit != nil:
		b.AlgoClOrdID = clOrdID(p.ClientOrderID + "-tp")
	case p.StopLoss != nil:
		b.AlgoClOrdID = clOrdID(p.ClientOrderID + "-sl")
	default:
		return contract.ProtectionResult{}, contract.Errorf(contract.CodeInvalidRequest, "give tpPercent, slPercent or both")
	}
	id, err := a.placeAlgo(ctx, c, b)
	if err != nil {
		return contract.ProtectionResult{}, err
	}
	var res contract.ProtectionResult
	if p.TakeProfit != nil {
		res.TPOrderID = algoPrefix + id
	}
	if p.StopLoss != nil {
		res.SLOrderID = algoPrefix + id
	}
	return res, nil
}
