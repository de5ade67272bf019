package bybit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// batchSize is how many orders one create-batch call carries: the
// rate-limit page counts 1 to 10 orders a batch request for linear.
const batchSize = 10

// cancelAllMax is the most orders one cancel-all call cancels (cancel-all
// page: futures, at most 500, picked at random when there are more).
const cancelAllMax = 500

// readWaits are the pauses before each read of a placed order: create is
// an acknowledgement and the order's state follows asynchronously
// (create-order page). Their sum bounds a post-only check to under 1 s.
var readWaits = []time.Duration{0, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond}

// Trigger directions of conditional orders (create-order page).
const (
	rising  = 1
	falling = 2
)

func limitBody(o connector.OrderRequest) orderBody {
	b := orderBody{Category: category, Symbol: o.Market.Native, Side: sideToWire(o.Side), OrderType: "Limit",
		Qty: fmtDec(o.Size), Price: fmtDec(o.Price), OrderLinkID: o.ClientOrderID, ReduceOnly: o.ReduceOnly}
	if o.PostOnly {
		b.TimeInForce = "PostOnly"
	}
	return b
}

// place sends one order. A duplicate orderLinkId (110072) means Bybit
// already has the order: its id is read back and answered, so a retry is
// never reported as a failure of an order that exists.
func (a *Adapter) place(ctx context.Context, c connector.Credential, m connector.Market, b orderBody) (orderAck, error) {
	var ack orderAck
	_, err := a.post(ctx, c, "/v5/order/create", b, &ack)
	if isCode(err, 110072) && b.OrderLinkID != "" {
		if o, found, ferr := a.lookup(ctx, c, m, "orderLinkId", b.OrderLinkID); ferr == nil && found {
			return orderAck{OrderID: o.OrderID, OrderLinkID: o.OrderLinkID}, nil
		}
	}
	if err != nil && (isCode(err, 10001) || isCode(err, 110017)) {
		a.forgetMode(c, m) // a position-mode change shows as a parameter error
	}
	return ack, err
}

// lookup reads one order by orderId or orderLinkId: the realtime list
// answers open and the latest 500 closed orders when asked by id (open-order
// page), order history the older ones and everything after a Bybit restart.
func (a *Adapter) lookup(ctx context.Context, c connector.Credential, m connector.Market, by, id string) (order, bool, error) {
	for _, path := range []string{"/v5/order/realtime", "/v5/order/history"} {
		var list orders
		if err := a.get(ctx, c, path, symbolQuery(m).Add(by, id), &list); err != nil {
			return order{}, false, err
		}
		for _, o := range list.List {
			if (by == "orderId" && o.OrderID == id) || (by == "orderLinkId" && o.OrderLinkID == id) {
				return o, true, nil
			}
		}
	}
	return order{}, false, nil
}

// settled reads a placed order until it has left Bybit's intake (done
// reports when the state is final enough for the caller), within readWaits.
// It answers the last state read; found is false when Bybit never showed it.
func (a *Adapter) settled(ctx context.Context, c connector.Credential, m connector.Market, id string, done func(order) bool) (order, bool, error) {
	var last order
	found := false
	for _, d := range readWaits {
		if d > 0 {
			if err := a.c.Wait(ctx, d); err != nil {
				return last, found, err
			}
		}
		o, ok, err := a.lookup(ctx, c, m, "orderId", id)
		if err != nil {
			return last, found, err
		}
		if ok {
			last, found = o, true
			if done(o) {
				break
			}
		}
	}
	return last, found, nil
}

func resting(o order) bool { return o.OrderStatus != "Created" && o.OrderStatus != "" }

func final(o order) bool {
	switch o.OrderStatus {
	case "Filled", "Cancelled", "Rejected", "Deactivated", "PartiallyFilledCanceled":
		return true
	}
	return false
}

// postOnlyRefused is the error for a post-only order Bybit accepted and
// then cancelled because it would have taken liquidity (not an error code
// on Bybit: orderStatus Cancelled, rejectReason EC_PostOnlyWillTakeLiquidity).
func postOnlyRefused(o order) error {
	if o.OrderStatus == "Cancelled" && o.RejectReason == postOnlyTaken && !o.CumExecQty.D().IsPositive() {
		return contract.Upstream(contract.ReasonPostOnlyRejected, "", postOnlyTaken,
			"Bybit cancelled post-only order %s: it would have taken liquidity", o.OrderID)
	}
	return nil
}

// PlaceLimitOrder implements connector.Adapter. The order is read back
// once it left Bybit's intake, so a post-only order that would have taken
// is reported as POST_ONLY_REJECTED, never as OPEN; an order still in
// intake after the reads is reported OPEN (accepted).
func (a *Adapter) PlaceLimitOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.LimitOrderResult, error) {
	if err := checkClientID(o.ClientOrderID); err != nil {
		return contract.LimitOrderResult{}, err
	}
	if err := a.oneWay(ctx, c, o.Market); err != nil {
		return contract.LimitOrderResult{}, err
	}
	ack, err := a.place(ctx, c, o.Market, limitBody(o))
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	res := contract.LimitOrderResult{OrderID: ack.OrderID, Market: o.Market.Native, Side: o.Side, Size: o.Size, Price: o.Price,
		Status: contract.StatusOpen}
	back, found, err := a.settled(ctx, c, o.Market, ack.OrderID, resting)
	if err != nil || !found {
		return res, nil // placed; its state could not be read yet
	}
	if err := postOnlyRefused(back); err != nil {
		return contract.LimitOrderResult{}, err
	}
	if back.OrderStatus == "Rejected" {
		return contract.LimitOrderResult{}, contract.Upstream(contract.ReasonInvalidOrder, "", back.RejectReason,
			"Bybit rejected order %s after accepting it: %s", back.OrderID, back.RejectReason)
	}
	res.Status = statusFromWire(back.OrderStatus)
	return res, nil
}

// PlaceMarketOrder implements connector.Adapter. Create answers ids only:
// the order is read back until final, then its executions give size,
// average price and fee (market orders run as IOC limit orders within a
// price band and may end Cancelled with a partial fill).
func (a *Adapter) PlaceMarketOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.MarketOrderResult, error) {
	if err := checkClientID(o.ClientOrderID); err != nil {
		return contract.MarketOrderResult{}, err
	}
	if max := a.symbolMeta(c, o.Market.Native).maxMarketQty; max.IsPositive() && o.Size.GreaterThan(max) {
		return contract.MarketOrderResult{}, contract.Errorf(contract.CodeInvalidRequest,
			"field \"size\": %s is above Bybit's largest market order on %s (%s); split the order or use a limit order", o.Size, o.Market.Canonical, max)
	}
	if err := a.oneWay(ctx, c, o.Market); err != nil {
		return contract.MarketOrderResult{}, err
	}
	ack, err := a.place(ctx, c, o.Market, orderBody{Category: category, Symbol: o.Market.Native, Side: sideToWire(o.Side),
		OrderType: "Market", Qty: fmtDec(o.Size), OrderLinkID: o.ClientOrderID, ReduceOnly: o.ReduceOnly})
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	out := contract.MarketOrderResult{OrderID: ack.OrderID, Market: o.Market.Native, Side: o.Side,
		FilledPrice: zero, FilledSize: zero, Fee: zero}
	ex, back, err := a.executed(ctx, c, o.Market, ack.OrderID)
	if err != nil {
		return contract.MarketOrderResult{}, connector.FillUnread("Bybit", ack.OrderID, err)
	}
	if !ex.Size.IsPositive() && (back.OrderStatus == "Cancelled" || back.OrderStatus == "Rejected") {
		return out, contract.Upstream(contract.ReasonInvalidOrder, "", back.RejectReason,
			"Bybit ended market order %s %s without a fill (no liquidity within its price band)", ack.OrderID, back.OrderStatus)
	}
	out.FilledSize, out.FilledPrice, out.Fee = ex.Size, ex.Price(o.Market), ex.Fee
	return out, nil
}

// executed reads what an order executed: the order until final, then its
// trade executions (execFee summed). When the executions lag behind the
// order's cumExecQty, the order's own avgPrice and cumFeeDetail stand in.
func (a *Adapter) executed(ctx context.Context, c connector.Credential, m connector.Market, id string) (connector.Execution, order, error) {
	back, found, err := a.settled(ctx, c, m, id, final)
	total := connector.NewExecution()
	if err != nil || !found {
		if err == nil {
			err = contract.Upstream(contract.ReasonUnknown, "", "", "Bybit does not show order %s yet", id)
		}
		return total, back, err
	}
	if !back.CumExecQty.D().IsPositive() {
		return total, back, nil
	}
	var ex executions
	if err := a.get(ctx, c, "/v5/execution/list", symbolQuery(m).Add("orderId", id).Add("limit", "100"), &ex); err == nil {
		for _, e := range ex.List {
			if e.OrderID == id && e.ExecType == "Trade" {
				total = total.Add(e.ExecQty.D(), e.ExecPrice.D(), e.ExecFee.D())
			}
		}
	}
	if total.Size.LessThan(back.CumExecQty.D()) {
		total = connector.Execution{Size: back.CumExecQty.D(), Notional: back.CumExecQty.D().Mul(back.AvgPrice.D()), Fee: fee(back)}
	}
	return total, back, nil
}

// conditional is a reduce-only-or-not market order that fires when the
// mark price reaches trigger moving in direction.
func conditional(m connector.Market, side contract.Side, size, trigger decimal.Decimal, direction int, reduceOnly, closing bool, clientID string) orderBody {
	return orderBody{Category: category, Symbol: m.Native, Side: sideToWire(side), OrderType: "Market", Qty: fmtDec(size),
		OrderLinkID: clientID, TriggerPrice: fmtDec(trigger), TriggerDirection: direction, TriggerBy: "MarkPrice",
		ReduceOnly: reduceOnly, CloseOnTrigger: closing}
}

// stopDirection is where a stop waits: Bybit takes triggerDirection as
// given and refuses one the mark contradicts (110092/110093), so it comes
// from the trigger's side of the mark at placement (DESIGN §13).
func stopDirection(o connector.OrderRequest) int {
	if o.StopRises() {
		return rising
	}
	return falling
}

// protectionDirection is where a position's stop-loss waits: a sell
// (closing a long) falls to it, a buy rises; its take-profit the other way.
func protectionDirection(side contract.Side) int {
	if side == contract.Sell {
		return falling
	}
	return rising
}

// PlaceStopOrder implements connector.Adapter: a conditional market order
// triggered on the mark price (Untriggered until then: PENDING).
func (a *Adapter) PlaceStopOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.StopOrderResult, error) {
	if err := checkClientID(o.ClientOrderID); err != nil {
		return contract.StopOrderResult{}, err
	}
	if err := a.oneWay(ctx, c, o.Market); err != nil {
		return contract.StopOrderResult{}, err
	}
	ack, err := a.place(ctx, c, o.Market, conditional(o.Market, o.Side, o.Size, o.TriggerPrice, stopDirection(o), o.ReduceOnly, false, o.ClientOrderID))
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	return contract.StopOrderResult{OrderID: ack.OrderID, Status: contract.StatusPending, TriggerPrice: o.TriggerPrice}, nil
}

// PlaceBatchOrder implements connector.Adapter: calls of up to 10 orders,
// in order; Bybit places each on its own and answers per order
// (result.list and retExtInfo.list aligned by index). Once a call has
// placed orders, a later call's failure touches only its own orders.
func (a *Adapter) PlaceBatchOrder(ctx context.Context, c connector.Credential, in []connector.OrderRequest) ([]contract.BatchOrderResult, error) {
	out, send := venuekit.Prechecked(in, func(o connector.OrderRequest) error { return checkClientID(o.ClientOrderID) })
	if len(send) == 0 {
		return out, nil
	}
	for _, m := range batchMarkets(in, send) {
		if err := a.oneWay(ctx, c, m); err != nil {
			return nil, err
		}
	}
	return venuekit.PlaceChunks(out, send, batchSize, func(chunk []int) (bool, error) {
		body := batchBody{Category: category, Request: make([]orderBody, len(chunk))}
		for j, i := range chunk {
			b := limitBody(in[i])
			b.Category = ""
			body.Request[j] = b
		}
		var ack batchAck
		env, err := a.post(ctx, c, "/v5/order/create-batch", body, &ack)
		if err != nil {
			return false, err
		}
		var info batchInfo
		_ = json.Unmarshal(env.RetExtInfo, &info)
		for j, i := range chunk {
			out[i] = a.batchResult(ctx, c, in[i], ack, info, j)
		}
		return venuekit.AnyPlaced(out, chunk), nil
	})
}

func batchMarkets(in []connector.OrderRequest, idx []int) []connector.Market {
	seen := map[string]bool{}
	var out []connector.Market
	for _, i := range idx {
		if m := in[i].Market; !seen[m.Native] {
			seen[m.Native] = true
			out = append(out, m)
		}
	}
	return out
}

// batchResult reads slot j of a batch answer; a post-only order is read
// back like a single one.
func (a *Adapter) batchResult(ctx context.Context, c connector.Credential, o connector.OrderRequest, ack batchAck, info batchInfo, j int) contract.BatchOrderResult {
	if j < len(info.List) && info.List[j].Code != 0 {
		return contract.BatchOrderResult{Status: contract.StatusRejected, Error: upstreamError(info.List[j].Code, info.List[j].Msg)}
	}
	if j >= len(ack.List) || ack.List[j].OrderID == "" {
		return contract.BatchOrderResult{Status: contract.StatusRejected,
			Error: contract.Upstream(contract.ReasonUnknown, "", "", "Bybit's batch answer has no order for this slot")}
	}
	id := ack.List[j].OrderID
	if o.PostOnly {
		if back, found, err := a.settled(ctx, c, o.Market, id, resting); err == nil && found {
			if err := postOnlyRefused(back); err != nil {
				ce, _ := contract.AsError(err)
				return contract.BatchOrderResult{OrderID: id, Status: contract.StatusRejected, Error: ce}
			}
		}
	}
	return contract.BatchOrderResult{OrderID: id, Status: contract.StatusOpen}
}

// PlaceProtectionOrders implements connector.Adapter with two conditional
// reduce-only, close-on-trigger market orders on the mark price, each with
// its own orderLinkId (-tp, -sl). Bybit's position TP/SL (trading-stop)
// would link them natively but answers no ids and takes no orderLinkId,
// so a placement whose answer is lost could not be found again by its
// clientOrderId; the runtime cancels the sibling once a leg fires. When the
// second leg fails the first is cancelled again.
func (a *Adapter) PlaceProtectionOrders(ctx context.Context, c connector.Credential, p connector.ProtectionRequest) (contract.ProtectionResult, error) {
	for _, leg := range []string{"-tp", "-sl"} {
		if err := checkClientID(p.ClientOrderID + leg); err != nil {
			return contract.ProtectionResult{}, err
		}
	}
	if err := a.oneWay(ctx, c, p.Market); err != nil {
		return contract.ProtectionResult{}, err
	}
	side := contract.Sell
	if p.PositionSide == contract.Short {
		side = contract.Buy
	}
	var res contract.ProtectionResult
	if p.TakeProfit != nil {
		// A take-profit waits on the far side of a stop.
		ack, err := a.place(ctx, c, p.Market, conditional(p.Market, side, p.Size, *p.TakeProfit, 3-protectionDirection(side), true, true, p.ClientOrderID+"-tp"))
		if err != nil {
			return res, err
		}
		res.TPOrderID = ack.OrderID
	}
	if p.StopLoss != nil {
		ack, err := a.place(ctx, c, p.Market, conditional(p.Market, side, p.Size, *p.StopLoss, protectionDirection(side), true, true, p.ClientOrderID+"-sl"))
		if err != nil {
			if res.TPOrderID != "" {
				_ = a.cancel(context.WithoutCancel(ctx), c, p.Market, res.TPOrderID)
			}
			return contract.ProtectionResult{}, err
		}
		res.SLOrderID = ack.OrderID
	}
	return res, nil
}

func (a *Adapter) cancel(ctx context.Context, c connector.Credential, m connector.Market, id string) error {
	_, err := a.post(ctx, c, "/v5/order/cancel", cancelBody{Category: category, Symbol: m.Native, OrderID: id}, nil)
	return err
}

// CancelOrder implements connector.Adapter. Bybit needs the symbol; without
// a market the open orders are searched for the id.
func (a *Adapter) CancelOrder(ctx context.Context, c connector.Credential, id string, m *connector.Market) error {
	if id == "" || len(id) > 64 {
		return contract.Errorf(contract.CodeInvalidRequest, "field \"orderId\": %q is not a Bybit order id", id)
	}
	if m != nil {
		return a.cancel(ctx, c, *m, id)
	}
	open, err := a.openOrders(ctx, c, nil)
	if err != nil {
		return err
	}
	for _, o := range open {
		if o.OrderID == id {
			return a.cancel(ctx, c, connector.Market{Native: o.Symbol}, id)
		}
	}
	return contract.Upstream(contract.ReasonOrderNotFound, "", "", "no open Bybit order %s; give market to cancel it by symbol", id)
}

// CancelAllOrders implements connector.Adapter: cancel-all covers active,
// conditional and TP/SL orders of the symbol and lists what it cancelled;
// more than 500 take further calls.
func (a *Adapter) CancelAllOrders(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	total := 0
	for range 10 {
		var res cancelled
		if _, err := a.post(ctx, c, "/v5/order/cancel-all", symbolBody{Category: category, Symbol: m.Native}, &res); err != nil {
			return total, err
		}
		total += len(res.List)
		if len(res.List) < cancelAllMax {
			break
		}
	}
	return total, nil
}

// CloseAllPositions implements connector.Adapter: a reduce-only market
// order against the position (there is no close endpoint), split by the
// largest market order; each piece's executions give the average price.
func (a *Adapter) CloseAllPositions(ctx context.Context, c connector.Credential, m connector.Market) (contract.CloseAllResult, error) {
	res := contract.CloseAllResult{ClosedSize: zero, AvgClosePrice: zero}
	if err := a.oneWay(ctx, c, m); err != nil {
		return res, err
	}
	rows, err := a.positionRows(ctx, c, &m)
	if err != nil {
		return res, err
	}
	maxQty := a.symbolMeta(c, m.Native).maxMarketQty
	total := connector.NewExecution()
	for _, p := range rows {
		if p.Symbol != m.Native || p.Side == "" || !p.Size.D().IsPositive() {
			continue
		}
		side := contract.Sell
		if p.Side == "Sell" {
			side = contract.Buy
		}
		for left := p.Size.D(); left.IsPositive(); {
			qty := left
			if maxQty.IsPositive() && qty.GreaterThan(maxQty) {
				qty = maxQty
			}
			ack, err := a.place(ctx, c, m, orderBody{Category: category, Symbol: m.Native, Side: sideToWire(side), OrderType: "Market",
				Qty: fmtDec(qty), ReduceOnly: true})
			if err != nil {
				return closeResult(total, m), err
			}
			ex, _, err := a.executed(ctx, c, m, ack.OrderID)
			if err != nil {
				return closeResult(total, m), err
			}
			total = total.Plus(ex)
			left = left.Sub(qty)
		}
	}
	return closeResult(total, m), nil
}

func closeResult(total connector.Execution, m connector.Market) contract.CloseAllResult {
	return contract.CloseAllResult{ClosedSize: total.Size, AvgClosePrice: total.Price(m)}
}

// SetLeverage implements connector.Adapter. Margin mode is account-wide on
// Bybit's unified account: cross (REGULAR_MARGIN) is set only when the
// account is in another mode, then buy and sell leverage (equal in one-way
// mode); 110043, "leverage not modified", means it already is.
func (a *Adapter) SetLeverage(ctx context.Context, c connector.Credential, m connector.Market, leverage int) (int, error) {
	if err := a.crossMargin(ctx, c); err != nil {
		return 0, err
	}
	lev := decimal.NewFromInt(int64(leverage)).String()
	_, err := a.post(ctx, c, "/v5/position/set-leverage", leverageBody{Category: category, Symbol: m.Native, BuyLeverage: lev, SellLeverage: lev}, nil)
	if err != nil && !isCode(err, 110043) {
		return 0, err
	}
	return leverage, nil
}

// crossMargin checks that the account is in cross margin
// (REGULAR_MARGIN). Bybit's margin mode is account-wide, so switching it
// for one setLeverage would change every market's margin silently: an
// account in another mode is refused, saying what to change and where.
func (a *Adapter) crossMargin(ctx context.Context, c connector.Credential) error {
	var info accountInfo
	if err := a.get(ctx, c, "/v5/account/info", nil, &info); err != nil {
		return err
	}
	if info.MarginMode == "REGULAR_MARGIN" || info.MarginMode == "" {
		return nil
	}
	return contract.Errorf(contract.CodeInvalidRequest,
		"Bybit's margin mode is account-wide and this unified account is in %s; setLeverage sets cross margin and "+
			"will not switch every market of the account: set the margin mode to Cross Margin in Bybit "+
			"(Unified Trading Account settings, or POST /v5/account/set-margin-mode REGULAR_MARGIN) and retry", info.MarginMode)
}

// FindOrder implements connector.Adapter by orderLinkId, open or closed.
func (a *Adapter) FindOrder(ctx context.Context, c connector.Credential, m connector.Market, clientOrderID string) (connector.FoundOrder, bool, error) {
	if err := checkClientID(clientOrderID); err != nil {
		return connector.FoundOrder{}, false, nil // never sent: Bybit would have refused it
	}
	o, found, err := a.lookup(ctx, c, m, "orderLinkId", clientOrderID)
	if err != nil || !found {
		return connector.FoundOrder{}, false, err
	}
	out := connector.FoundOrder{Order: orderFromWire(o), AvgPrice: o.AvgPrice.D(), Fee: fee(o)}
	if venueCancelled(o) {
		out.Status = contract.StatusRejected
	}
	return out, true, nil
}
