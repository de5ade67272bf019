package paper

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// Amend changes a live order in place; a zero field stays as it is. Size
// is the new total, filled part included.
type Amend struct {
	Size         decimal.Decimal
	Price        decimal.Decimal // limit orders
	TriggerPrice decimal.Decimal // stop and take-profit orders
}

// AmendOrder changes an OPEN or PENDING order in place (it keeps its id
// and place in the account's log) and returns it. A limit amended across
// the book fills what it can at once, as a new placement would; a
// post-only one is refused instead. Errors: ErrOrderNotFound (with
// ErrOrderClosed for a final order), ErrInvalidOrder,
// ErrPostOnlyWouldCross, ErrInsufficientMargin.
func (e *Engine) AmendOrder(id, orderID string, req Amend) (res Order, err error) {
	now := e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return Order{}, fmt.Errorf("amend order: %w", err)
	}
	o := a.orders[orderID]
	if o == nil {
		if ao, ok, err := e.archivedByID(id, orderID); err != nil {
			return Order{}, fmt.Errorf("amend order %s: %w", orderID, err)
		} else if ok {
			return Order{}, fmt.Errorf("amend order %s: it is %s: %w: %w", orderID, ao.Status, ErrOrderNotFound, ErrOrderClosed)
		}
		return Order{}, fmt.Errorf("amend order %s: %w", orderID, ErrOrderNotFound)
	}
	if !o.live() {
		return Order{}, fmt.Errorf("amend order %s: it is %s: %w: %w", orderID, o.Status, ErrOrderNotFound, ErrOrderClosed)
	}
	m, err := e.market(o.Market)
	if err != nil {
		return Order{}, err
	}
	next, err := amended(m, o, req)
	if err != nil {
		return Order{}, fmt.Errorf("amend order %s: %w", orderID, err)
	}
	if err := e.checkAmend(a, m, o, next); err != nil {
		return Order{}, fmt.Errorf("amend order %s: %w", orderID, err)
	}
	if err := e.write(record{Op: opAmend, Account: id, ID: orderID,
		Order: &OrderRequest{Size: req.Size, Price: req.Price, TriggerPrice: req.TriggerPrice}}); err != nil {
		return Order{}, fmt.Errorf("amend order: %w", err)
	}
	t := now.Unix()
	o.Size, o.Price, o.TriggerPrice, o.UpdatedAt = next.Size, next.Price, next.TriggerPrice, timeOf(t)
	if o.Type == Limit && e.crosses(m, o) {
		levels, _ := m.sweep(o.Side, o.Size.Sub(o.FilledSize), o.Price, t)
		e.execute(a, m, o, levels, t)
		if !o.FilledSize.LessThan(o.Size) {
			e.finish(o, Filled, "", t)
		}
	}
	e.checkOrders(m, t)
	return o.Order, nil
}

// amended is o with req applied, validated as a placement is.
func amended(m *market, o *order, req Amend) (Order, error) {
	next := o.Order
	bad := func(format string, args ...any) (Order, error) {
		return Order{}, fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrInvalidOrder)
	}
	if req.Size.Sign() != 0 {
		if req.Size.Sign() < 0 || !isMultiple(req.Size, m.spec.LotSize) {
			return bad("size %s must be a positive multiple of the lot size %s", req.Size, m.spec.LotSize)
		}
		if !req.Size.GreaterThan(o.FilledSize) {
			return bad("size %s must be above the filled size %s", req.Size, o.FilledSize)
		}
		next.Size = req.Size
	}
	if req.Price.Sign() != 0 {
		if o.Type != Limit {
			return bad("a %s order has no limit price", o.Type)
		}
		if req.Price.Sign() < 0 || !isMultiple(req.Price, m.spec.TickSize) {
			return bad("price %s must be a positive multiple of the tick %s", req.Price, m.spec.TickSize)
		}
		next.Price = req.Price
	}
	if req.TriggerPrice.Sign() != 0 {
		if o.Type != StopMarket && o.Type != TakeProfitMarket {
			return bad("a %s order has no trigger price", o.Type)
		}
		if req.TriggerPrice.Sign() < 0 || !isMultiple(req.TriggerPrice, m.spec.TickSize) {
			return bad("trigger price %s must be a positive multiple of the tick %s", req.TriggerPrice, m.spec.TickSize)
		}
		next.TriggerPrice = req.TriggerPrice
	}
	return next, nil
}

// checkAmend refuses a post-only limit amended across the book and an
// amendment whose added size the free collateral does not cover.
func (e *Engine) checkAmend(a *account, m *market, o *order, next Order) error {
	probe := &order{Order: next}
	if o.Type == Limit && o.PostOnly && e.crosses(m, probe) {
		return fmt.Errorf("%s limit %s on %s crosses the book: %w", o.Side, next.Price, m.spec.Symbol, ErrPostOnlyWouldCross)
	}
	added := next.Size.Sub(o.Size)
	if !added.IsPositive() {
		return nil
	}
	price := next.Price
	if o.Type != Limit {
		price = next.TriggerPrice
	}
	return e.checkMargin(a, m, o.Side, added, price, decimal.Zero, o.ReduceOnly)
}

// crosses reports whether limit order o would take liquidity now.
func (e *Engine) crosses(m *market, o *order) bool {
	return (o.Side == Buy && o.Price.GreaterThanOrEqual(m.bestAsk())) || (o.Side == Sell && o.Price.LessThanOrEqual(m.bestBid()))
}
