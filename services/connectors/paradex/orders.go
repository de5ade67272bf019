package paradex

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
	"github.com/shopspring/decimal"
)

// batchSize is the most orders one POST /orders/batch takes (1 to 10).
const batchSize = 10

// readWaits are the pauses before each read of a placed order: Paradex
// answers 201 NEW once the order is queued and runs its risk checks after
// (order-instructions page), so a rejection shows only on a later read.
var readWaits = []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond}

// clientIDPattern bounds client_id (OrderRequest: at most 64 characters);
// the charset is ours, so ids stay safe in a URL path.
var clientIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// orderIDPattern: Paradex order ids are long decimal strings (28 digits
// today), kept as strings.
var orderIDPattern = regexp.MustCompile(`^[0-9]{1,40}$`)

func checkClientID(id string) error {
	return venuekit.ClientIDRule{Venue: "Paradex", Pattern: clientIDPattern, Takes: "1 to 64 characters; use letters, digits, '-', '_', '.' or ':'"}.Check(id)
}

// body turns a rounded order into Paradex's OrderRequest (unsigned).
func body(o connector.OrderRequest) stark.OrderRequest {
	b := stark.OrderRequest{Market: o.Market.Native, Side: sideToWire(o.Side), Size: fmtDec(o.Size), Instruction: "GTC", ClientID: o.ClientOrderID}
	switch o.Type {
	case connector.Limit:
		b.Type, b.Price = "LIMIT", fmtDec(o.Price)
		if o.PostOnly {
			b.Instruction = "POST_ONLY"
		}
	case connector.Stop:
		b.Type, b.TriggerPrice = "STOP_MARKET", fmtDec(o.TriggerPrice)
	default:
		b.Type = "MARKET" // price left out, signed as 0 (paradex-py, ccxt)
	}
	if o.ReduceOnly {
		b.Flags = []string{"REDUCE_ONLY"}
	}
	return b
}

// signer returns what signs an order for c: account, chain id, and the
// time on Paradex's clock in ms (signature_timestamp).
func (a *Adapter) sign(ctx context.Context, c connector.Credential, acct *account, b *stark.OrderRequest) error {
	h := a.c.host(a.base(c))
	chain, err := a.c.chainID(ctx, h)
	if err != nil {
		return err
	}
	if err := a.c.syncIfStale(ctx, h); err != nil {
		return err
	}
	if err := b.Sign(acct.key, chain, acct.address, h.clock.Now().UnixMilli()); err != nil {
		return contract.Errorf(contract.CodeInvalidRequest, "the order cannot be signed for Paradex: %v", err)
	}
	return nil
}

// place signs and sends one order; 201 answers it with status NEW. A
// DUPLICATED_CLIENT_ID means Paradex already has it: that order is
// answered, so a retry never reports an order that exists as failed.
func (a *Adapter) place(ctx context.Context, c connector.Credential, m connector.Market, b stark.OrderRequest) (orderResp, error) {
	acct, err := decode(c)
	if err != nil {
		return orderResp{}, err
	}
	if err := a.sign(ctx, c, acct, &b); err != nil {
		return orderResp{}, err
	}
	var o orderResp
	_, err = a.c.do(ctx, a.base(c), acct, request{method: http.MethodPost, path: "/orders", body: b}, &o)
	if ce, ok := contract.AsError(err); ok && ce.ExchangeCode == "DUPLICATED_CLIENT_ID" && b.ClientID != "" {
		if found, ok, ferr := a.byClientID(ctx, c, m, b.ClientID); ferr == nil && ok {
			return found, nil
		}
	}
	if err == nil && o.ID == "" {
		return o, contract.Upstream(contract.ReasonUnknown, "", "", "Paradex accepted the order without an id")
	}
	return o, err
}

// read is GET /orders/{id}.
func (a *Adapter) read(ctx context.Context, c connector.Credential, id string) (orderResp, error) {
	var o orderResp
	err := a.private(ctx, c, http.MethodGet, "/orders/"+id, nil, nil, &o)
	return o, err
}

// settled reads a placed order until done says its state is final enough,
// within readWaits, and answers the last state read.
func (a *Adapter) settled(ctx context.Context, c connector.Credential, o orderResp, done func(orderResp) bool) (orderResp, error) {
	last := o
	for _, d := range readWaits {
		if d > 0 {
			if err := a.c.wait(ctx, d); err != nil {
				return last, err
			}
		}
		back, err := a.read(ctx, c, o.ID)
		if err != nil {
			if ce, ok := contract.AsError(err); ok && ce.Reason == contract.ReasonOrderNotFound {
				continue // not visible yet
			}
			return last, err
		}
		last = back
		if done(back) {
			break
		}
	}
	return last, nil
}

func pastIntake(o orderResp) bool { return o.Status != "NEW" && o.Status != "" }
func closed(o orderResp) bool     { return o.Status == "CLOSED" }

// refused is the error for an order Paradex accepted (201 NEW) and then
// closed with nothing filled: its risk checks or the post-only rule said
// no. It is nil for an order that stands or filled.
func refused(o orderResp) error {
	if o.Status != "CLOSED" || o.Size.D().Sub(o.RemainingSize.D()).IsPositive() || o.CancelReason == "USER_CANCELED" {
		return nil
	}
	reason := cancelReason(o.CancelReason)
	msg := o.CancelReason
	if msg == "" {
		msg = "no reason given"
	}
	return contract.Upstream(reason, o.CancelReason, msg, "Paradex accepted order %s and then closed it unfilled: %s%s", o.ID, msg, hints[reason])
}

// PlaceLimitOrder implements connector.Adapter. The order is read back
// after Paradex's risk checks, so one they refuse (margin, post-only
// crossing) is reported as EXCHANGE_ERROR, never as OPEN; one still NEW
// after the reads is reported OPEN (accepted).
func (a *Adapter) PlaceLimitOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.LimitOrderResult, error) {
	if err := checkClientID(o.ClientOrderID); err != nil {
		return contract.LimitOrderResult{}, err
	}
	ack, err := a.place(ctx, c, o.Market, body(o))
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	// Size and price as Paradex holds them (the request's when unsaid).
	res := contract.LimitOrderResult{OrderID: ack.ID, Market: o.Market.Native, Side: o.Side, Size: connector.OrDefault(ack.Size.D(), o.Size),
		Price: connector.OrDefault(ack.Price.D(), o.Price), Status: contract.StatusOpen}
	back, err := a.settled(ctx, c, ack, pastIntake)
	if err != nil {
		return res, nil // placed; its state could not be read yet
	}
	if err := refused(back); err != nil {
		return contract.LimitOrderResult{}, err
	}
	res.Status = statusFromWire(back)
	return res, nil
}

// PlaceMarketOrder implements connector.Adapter: the order is read until
// CLOSED; filled size is size - remaining_size, the price avg_fill_price
// and the fee the sum of its fills.
func (a *Adapter) PlaceMarketOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.MarketOrderResult, error) {
	if err := checkClientID(o.ClientOrderID); err != nil {
		return contract.MarketOrderResult{}, err
	}
	ack, err := a.place(ctx, c, o.Market, body(o))
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	out := contract.MarketOrderResult{OrderID: ack.ID, Market: o.Market.Native, Side: o.Side, FilledPrice: decimal.Zero, FilledSize: decimal.Zero, Fee: decimal.Zero}
	ex, back, err := a.executed(ctx, c, o.Market, ack)
	if err != nil {
		return contract.MarketOrderResult{}, connector.FillUnread("Paradex", ack.ID, err)
	}
	if err := refused(back); err != nil {
		return out, err
	}
	out.FilledSize, out.FilledPrice, out.Fee = ex.Size, ex.Price(o.Market), ex.Fee
	return out, nil
}

// executed reads an order until CLOSED and totals what it executed: the
// order's own filled size and average price, the fee from its fills.
func (a *Adapter) executed(ctx context.Context, c connector.Credential, m connector.Market, ack orderResp) (connector.Execution, orderResp, error) {
	back, err := a.settled(ctx, c, ack, closed)
	total := connector.NewExecution()
	if err == nil && !closed(back) {
		err = fmt.Errorf("still %s after the read-back", back.Status)
	}
	if err != nil {
		return total, back, err
	}
	filled := back.Size.D().Sub(back.RemainingSize.D())
	if !back.RemainingSize.Given || !filled.IsPositive() {
		return total, back, nil
	}
	return total.Add(filled, back.AvgFillPrice.D(), a.orderFee(ctx, c, m, back.ID)), back, nil
}

// orderFee sums the fees of the order's fills among the market's last
// 200; zero when they cannot be read.
func (a *Adapter) orderFee(ctx context.Context, c connector.Credential, m connector.Market, id string) decimal.Decimal {
	fee := decimal.Zero
	if fills, err := a.fills(ctx, c, marketQuery(m), 200); err == nil {
		for _, f := range fills {
			if f.OrderID == id {
				fee = fee.Add(f.Fee.D())
			}
		}
	}
	return fee
}

// PlaceStopOrder implements connector.Adapter: a STOP_MARKET order,
// triggered when the mark price crosses trigger_price (stop-order page);
// UNTRIGGERED until then (PENDING).
func (a *Adapter) PlaceStopOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.StopOrderResult, error) {
	if err := checkClientID(o.ClientOrderID); err != nil {
		return contract.StopOrderResult{}, err
	}
	o.Type = connector.Stop
	ack, err := a.place(ctx, c, o.Market, body(o))
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	back, err := a.settled(ctx, c, ack, pastIntake)
	if err == nil {
		if err := refused(back); err != nil {
			return contract.StopOrderResult{}, err
		}
	}
	return contract.StopOrderResult{OrderID: ack.ID, Status: contract.StatusPending, TriggerPrice: connector.OrDefault(ack.TriggerPrice.D(), o.TriggerPrice)}, nil
}

// PlaceBatchOrder implements connector.Adapter: POST /orders/batch with up
// to 10 signed orders a call. Paradex risk-checks each order on its own
// (not atomic); answers are matched to requests by client_id, and errors
// left over are given to unmatched requests in order (their alignment is
// not documented). Each accepted order is read back like a single one.
func (a *Adapter) PlaceBatchOrder(ctx context.Context, c connector.Credential, in []connector.OrderRequest) ([]contract.BatchOrderResult, error) {
	acct, err := decode(c)
	if err != nil {
		return nil, err
	}
	out, send := venuekit.Prechecked(in, func(o connector.OrderRequest) error { return checkClientID(o.ClientOrderID) })
	placedAny := false
	for start := 0; start < len(send); start += batchSize {
		chunk := send[start:min(start+batchSize, len(send))]
		bodies := make([]stark.OrderRequest, len(chunk))
		for j, i := range chunk {
			bodies[j] = body(in[i])
			if err := a.sign(ctx, c, acct, &bodies[j]); err != nil {
				return nil, err
			}
		}
		var res batchResp
		_, err := a.c.do(ctx, a.base(c), acct, request{method: http.MethodPost, path: "/orders/batch", body: bodies}, &res)
		if err != nil {
			if !placedAny {
				return nil, err
			}
			ce, _ := contract.AsError(err)
			status := contract.StatusRejected
			if connector.Ambiguous(err) {
				status = contract.StatusUnknown
			}
			for _, i := range chunk {
				out[i] = contract.BatchOrderResult{Status: status, Error: ce}
			}
			continue
		}
		byClient := map[string]orderResp{}
		for _, o := range res.Orders {
			byClient[o.ClientID] = o
		}
		errs := res.Errors
		for j, i := range chunk {
			if o, ok := byClient[bodies[j].ClientID]; ok {
				out[i] = a.batchResult(ctx, c, o)
				if out[i].Status != contract.StatusRejected {
					placedAny = true
				}
				continue
			}
			var e *apiError
			for len(errs) > 0 && e == nil {
				e, errs = errs[0], errs[1:]
			}
			ce := contract.Upstream(contract.ReasonUnknown, "", "", "Paradex's batch answer has no order for clientOrderId %s", bodies[j].ClientID)
			if e != nil {
				ce, _ = contract.AsError(upstreamError(http.StatusBadRequest, e.Error, e.Message, "POST /orders/batch"))
			}
			out[i] = contract.BatchOrderResult{Status: contract.StatusRejected, Error: ce}
		}
	}
	return out, nil
}

func (a *Adapter) batchResult(ctx context.Context, c connector.Credential, o orderResp) contract.BatchOrderResult {
	back, err := a.settled(ctx, c, o, pastIntake)
	if err == nil {
		if err := refused(back); err != nil {
			ce, _ := contract.AsError(err)
			return contract.BatchOrderResult{OrderID: o.ID, Status: contract.StatusRejected, Error: ce}
		}
		return contract.BatchOrderResult{OrderID: o.ID, Status: statusFromWire(back)}
	}
	return contract.BatchOrderResult{OrderID: o.ID, Status: contract.StatusOpen}
}

// PlaceProtectionOrders implements connector.Adapter with a
// TAKE_PROFIT_MARKET and a STOP_LOSS_MARKET order, reduce-only, opposite
// the position, each with its own client_id (-tp, -sl; tp-sl page). The
// runtime watches the pair (LinksProtection is false). When the second leg
// fails the first is cancelled again.
func (a *Adapter) PlaceProtectionOrders(ctx context.Context, c connector.Credential, p connector.ProtectionRequest) (contract.ProtectionResult, error) {
	for _, leg := range []string{"-tp", "-sl"} {
		if err := checkClientID(p.ClientOrderID + leg); err != nil {
			return contract.ProtectionResult{}, err
		}
	}
	side := contract.Sell
	if p.PositionSide == contract.Short {
		side = contract.Buy
	}
	leg := func(typ string, trigger decimal.Decimal, suffix string) stark.OrderRequest {
		return stark.OrderRequest{Market: p.Market.Native, Side: sideToWire(side), Type: typ, Size: fmtDec(p.Size), Instruction: "GTC",
			TriggerPrice: fmtDec(trigger), ClientID: p.ClientOrderID + suffix, Flags: []string{"REDUCE_ONLY"}}
	}
	// Each leg is read back after the risk checks: a leg Paradex closes
	// (no position to reduce, margin) fails the pair, and the other leg is
	// cancelled again so none is left orphaned.
	placeLeg := func(typ string, trigger decimal.Decimal, suffix string) (string, error) {
		o, err := a.place(ctx, c, p.Market, leg(typ, trigger, suffix))
		if err != nil {
			return "", err
		}
		if back, err := a.settled(ctx, c, o, pastIntake); err == nil {
			if err := refused(back); err != nil {
				return "", err
			}
		}
		return o.ID, nil
	}
	var res contract.ProtectionResult
	if p.TakeProfit != nil {
		id, err := placeLeg("TAKE_PROFIT_MARKET", *p.TakeProfit, "-tp")
		if err != nil {
			return res, err
		}
		res.TPOrderID = id
	}
	if p.StopLoss != nil {
		id, err := placeLeg("STOP_LOSS_MARKET", *p.StopLoss, "-sl")
		if err != nil {
			if res.TPOrderID != "" {
				_ = a.cancel(context.WithoutCancel(ctx), c, res.TPOrderID)
			}
			return contract.ProtectionResult{}, err
		}
		res.SLOrderID = id
	}
	return res, nil
}

func (a *Adapter) cancel(ctx context.Context, c connector.Credential, id string) error {
	return a.private(ctx, c, http.MethodDelete, "/orders/"+id, nil, nil, nil)
}

// CancelOrder implements connector.Adapter: DELETE /orders/{id} (204,
// queued); Paradex needs no market.
func (a *Adapter) CancelOrder(ctx context.Context, c connector.Credential, id string, _ *connector.Market) error {
	if !orderIDPattern.MatchString(id) {
		return contract.Errorf(contract.CodeInvalidRequest, "field \"orderId\": %q is not a Paradex order id (a decimal number)", id)
	}
	return a.cancel(ctx, c, id)
}

// CancelAllOrders implements connector.Adapter: DELETE /orders?market=X
// answers no count, so the open orders are counted first.
func (a *Adapter) CancelAllOrders(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	open, err := a.openOrders(ctx, c, &m)
	if err != nil {
		return 0, err
	}
	if len(open) == 0 {
		return 0, nil
	}
	if err := a.private(ctx, c, http.MethodDelete, "/orders", marketQuery(m), nil, nil); err != nil {
		return 0, err
	}
	return len(open), nil
}

// CloseAllPositions implements connector.Adapter: a reduce-only market
// order against the position (there is no close endpoint), read until
// closed for its size and average price.
func (a *Adapter) CloseAllPositions(ctx context.Context, c connector.Credential, m connector.Market) (contract.CloseAllResult, error) {
	res := contract.CloseAllResult{ClosedSize: decimal.Zero, AvgClosePrice: decimal.Zero}
	rows, err := a.positionRows(ctx, c)
	if err != nil {
		return res, err
	}
	total := connector.NewExecution()
	for _, p := range rows {
		if p.Market != m.Native {
			continue
		}
		side := contract.Sell
		if p.Side == "SHORT" || p.Size.D().IsNegative() {
			side = contract.Buy
		}
		ack, err := a.place(ctx, c, m, body(connector.OrderRequest{Market: m, Type: connector.MarketType, Side: side, Size: p.Size.D().Abs(), ReduceOnly: true}))
		if err != nil {
			return closeResult(total, m), err
		}
		ex, back, err := a.executed(ctx, c, m, ack)
		if err != nil {
			return closeResult(total, m), err
		}
		if err := refused(back); err != nil {
			return closeResult(total, m), err
		}
		total = total.Plus(ex)
	}
	return closeResult(total, m), nil
}

func closeResult(total connector.Execution, m connector.Market) contract.CloseAllResult {
	return contract.CloseAllResult{ClosedSize: total.Size, AvgClosePrice: total.Price(m)}
}

// SetLeverage implements connector.Adapter: POST /account/margin/{market}
// with cross margin.
func (a *Adapter) SetLeverage(ctx context.Context, c connector.Credential, m connector.Market, leverage int) (int, error) {
	var r struct {
		Leverage int `json:"leverage"`
	}
	if err := a.private(ctx, c, http.MethodPost, "/account/margin/"+url.PathEscape(m.Native), nil, marginBody{Leverage: leverage, MarginType: "CROSS"}, &r); err != nil {
		return 0, err
	}
	if r.Leverage > 0 {
		return r.Leverage, nil
	}
	return leverage, nil
}

// GetLeverage implements connector.LeverageReader: GET
// /account/margin?market= lists the market's margin config.
func (a *Adapter) GetLeverage(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	var r struct {
		Configs []struct {
			Market   string `json:"market"`
			Leverage dec    `json:"leverage"`
		} `json:"configs"`
	}
	if err := a.private(ctx, c, http.MethodGet, "/account/margin", url.Values{"market": {m.Native}}, nil, &r); err != nil {
		return 0, err
	}
	for _, cfg := range r.Configs {
		if cfg.Market == m.Native {
			return int(cfg.Leverage.D().Ceil().IntPart()), nil
		}
	}
	return 0, nil
}

// byClientID reads an order by client_id: GET /orders/by_client_id serves
// open and recent ones, /orders-history the rest.
func (a *Adapter) byClientID(ctx context.Context, c connector.Credential, m connector.Market, id string) (orderResp, bool, error) {
	var o orderResp
	err := a.private(ctx, c, http.MethodGet, "/orders/by_client_id/"+url.PathEscape(id), marketQuery(m), nil, &o)
	if err == nil && o.ID != "" {
		return o, true, nil
	}
	if ce, ok := contract.AsError(err); err != nil && (!ok || ce.Reason != contract.ReasonOrderNotFound) {
		return o, false, err
	}
	var l list[orderResp]
	q := marketQuery(m)
	q.Set("client_id", id)
	if err := a.private(ctx, c, http.MethodGet, "/orders-history", q, nil, &l); err != nil {
		return o, false, err
	}
	for _, x := range l.Results {
		if x.ClientID == id {
			return x, true, nil
		}
	}
	return o, false, nil
}

// FindOrder implements connector.Adapter by client_id, open or closed.
// An order Paradex closed unfilled for its own reasons is REJECTED.
func (a *Adapter) FindOrder(ctx context.Context, c connector.Credential, m connector.Market, clientOrderID string) (connector.FoundOrder, bool, error) {
	if checkClientID(clientOrderID) != nil {
		return connector.FoundOrder{}, false, nil // never sent: Paradex would have refused it
	}
	o, found, err := a.byClientID(ctx, c, m, clientOrderID)
	if err != nil || !found {
		return connector.FoundOrder{}, false, err
	}
	return a.found(ctx, c, m, o), true, nil
}

// FindOrderByID implements connector.OrderByIDFinder with GET /orders/{id}.
func (a *Adapter) FindOrderByID(ctx context.Context, c connector.Credential, m connector.Market, orderID string) (connector.FoundOrder, bool, error) {
	if orderID == "" || url.PathEscape(orderID) != orderID {
		return connector.FoundOrder{}, false, nil
	}
	o, err := a.read(ctx, c, orderID)
	if ce, ok := contract.AsError(err); ok && ce.Reason == contract.ReasonOrderNotFound {
		return connector.FoundOrder{}, false, nil
	}
	if err != nil {
		return connector.FoundOrder{}, false, err
	}
	return a.found(ctx, c, m, o), true, nil
}

// found is o with the fee of its fills.
func (a *Adapter) found(ctx context.Context, c connector.Credential, m connector.Market, o orderResp) connector.FoundOrder {
	out := connector.FoundOrder{Order: orderFromWire(o), AvgPrice: o.AvgFillPrice.D(), Fee: decimal.Zero}
	if out.FilledSize.IsPositive() {
		out.Fee = a.orderFee(ctx, c, m, o.ID)
	}
	return out
}
