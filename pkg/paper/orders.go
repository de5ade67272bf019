package paper

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// maxClientOrderID bounds client order id length.
const maxClientOrderID = 128

var bpsDivisor = decimal.NewFromInt(10000)

// order is an Order with what the engine keeps beside it.
type order struct {
	Order
	notional decimal.Decimal // Σ fill size·price, for an exact average
	acct     *account
	seq      uint64 // placement order
	heapIdx  int    // position in its market's heap; -1 when in none
}

func (o *order) live() bool { return o.Status == Open || o.Status == Pending }

func timeOf(t int64) time.Time { return time.Unix(t, 0).UTC() }

// PlaceOrder validates and places an order for the account (created if
// new) and returns it as it stands after any immediate execution: a LIMIT
// is OPEN (or FILLED if it crossed and took enough liquidity), a MARKET
// FILLED, a stop or take-profit PENDING. Errors: ErrUnknownMarket,
// ErrInvalidOrder, ErrPostOnlyWouldCross, ErrReduceOnly,
// ErrInsufficientMargin, ErrInvalidRequest (account id). A rejected
// placement leaves no order behind.
func (e *Engine) PlaceOrder(id string, req OrderRequest) (res Order, err error) {
	now := e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	return e.placeOrder(id, req, now)
}

// PlaceOrderDeferred is PlaceOrder that returns before the placement's
// journal record is durable, with wait, which returns once it is (or fails
// with ErrJournal). A caller with a durable write of its own to make runs
// both at once; it must not report the order before wait returned nil.
func (e *Engine) PlaceOrderDeferred(id string, req OrderRequest) (res Order, wait func() error, err error) {
	return e.PlaceOrderNoted(id, req, nil)
}

// PlaceOrderNoted is PlaceOrderDeferred that records note (a caller's log
// line, JSON) in the placement's own journal record, so that the order is
// never durable without it. Replay hands back the notes of the placements
// that succeeded (Notes).
func (e *Engine) PlaceOrderNoted(id string, req OrderRequest, note []byte) (res Order, wait func() error, err error) {
	now := e.lock()
	from := e.written
	res, err = e.placeOrderNoted(id, req, now, note)
	// A snapshot may come now: the caller's log already holds note (Barrier.Hold).
	wait = e.unlockDeferred(from)
	if err != nil {
		return res, noWait, err
	}
	return res, wait, nil
}

// placeOrder is PlaceOrder under e.mu.
func (e *Engine) placeOrder(id string, req OrderRequest, now time.Time) (Order, error) {
	return e.placeOrderNoted(id, req, now, nil)
}

func (e *Engine) placeOrderNoted(id string, req OrderRequest, now time.Time, note []byte) (Order, error) {
	a, err := e.account(id)
	if err != nil {
		return Order{}, fmt.Errorf("place order: %w", err)
	}
	if err := e.write(record{Op: opPlace, Account: id, Order: &req, Note: note}); err != nil {
		return Order{}, fmt.Errorf("place order: %w", err)
	}
	o, err := e.place(a, req, now.Unix())
	if err != nil {
		return Order{}, fmt.Errorf("place order: %w", err)
	}
	return o.Order, nil
}

func (e *Engine) place(a *account, req OrderRequest, t int64) (*order, error) {
	m, err := e.market(req.Market)
	if err != nil {
		return nil, err
	}
	if err := validate(m, req); err != nil {
		return nil, err
	}
	size := req.Size
	if req.ReduceOnly {
		c := closable(a.positions[m.spec.Symbol], req.Side, size)
		if c.IsZero() {
			return nil, fmt.Errorf("%s %s on %s: no %s position to reduce: %w", req.Side, req.Type, m.spec.Symbol, opposite(req.Side), ErrReduceOnly)
		}
		size = c
	}
	ref := m.mark
	switch req.Type {
	case Limit:
		ref = req.Price
	case StopMarket, TakeProfitMarket:
		ref = req.TriggerPrice
	}
	if !req.ReduceOnly && size.Mul(ref).LessThan(m.spec.MinNotional) {
		return nil, fmt.Errorf("%s %s on %s: notional %s below minimum %s: %w", req.Side, req.Type, m.spec.Symbol, size.Mul(ref), m.spec.MinNotional, ErrInvalidOrder)
	}

	o := &order{Order: Order{
		ClientOrderID: req.ClientOrderID,
		Market:        m.spec.Symbol,
		Side:          req.Side,
		Type:          req.Type,
		Size:          size,
		PostOnly:      req.PostOnly,
		ReduceOnly:    req.ReduceOnly,
		PositionLinked: req.PositionLinked && req.ReduceOnly &&
			(req.Type == StopMarket || req.Type == TakeProfitMarket),
	}}
	switch req.Type {
	case Limit:
		o.Price = req.Price
		crosses := (req.Side == Buy && req.Price.GreaterThanOrEqual(m.bestAsk())) ||
			(req.Side == Sell && req.Price.LessThanOrEqual(m.bestBid()))
		if crosses && req.PostOnly {
			best := m.bestAsk()
			if req.Side == Sell {
				best = m.bestBid()
			}
			return nil, fmt.Errorf("%s limit %s on %s: best opposite price is %s: %w", req.Side, req.Price, m.spec.Symbol, best, ErrPostOnlyWouldCross)
		}
		// A crossing order fills at the book and rests the rest at its
		// price: its margin is checked at those prices, not at its limit.
		var levels []Level
		price, fee := req.Price, decimal.Zero
		if crosses {
			var got decimal.Decimal
			levels, got = m.sweep(req.Side, size, req.Price, t)
			filled := levelsNotional(levels)
			price, fee = filled.Add(size.Sub(got).Mul(req.Price)).Div(size), e.takerFee(filled)
		}
		if err := e.checkMargin(a, m, req.Side, size, price, fee, req.ReduceOnly); err != nil {
			return nil, err
		}
		e.register(a, m, o, Open, t)
		if crosses {
			e.execute(a, m, o, levels, t)
		}
		if !o.FilledSize.LessThan(o.Size) {
			e.finish(o, Filled, "", t)
		} else if o.FilledSize.Sign() > 0 {
			e.emitOrder(o) // resting, partly filled
		}
	case Market:
		levels, avg, err := m.plan(req.Side, size, t)
		if err != nil {
			return nil, err
		}
		if err := e.checkMargin(a, m, req.Side, size, avg, e.takerFee(size.Mul(avg)), req.ReduceOnly); err != nil {
			return nil, err
		}
		e.register(a, m, o, Open, t)
		e.execute(a, m, o, levels, t)
		e.finish(o, Filled, "", t)
	case StopMarket, TakeProfitMarket:
		o.TriggerPrice = req.TriggerPrice
		fee := e.takerFee(size.Mul(req.TriggerPrice))
		if err := e.checkMargin(a, m, req.Side, size, req.TriggerPrice, fee, req.ReduceOnly); err != nil {
			return nil, err
		}
		e.register(a, m, o, Pending, t)
	}
	return o, nil
}

func validate(m *market, req OrderRequest) error {
	what := fmt.Sprintf("%s %s on %s", req.Side, req.Type, m.spec.Symbol)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: %w", what, fmt.Sprintf(format, args...), ErrInvalidOrder)
	}
	if req.Side != Buy && req.Side != Sell {
		return bad("side must be BUY or SELL")
	}
	switch req.Type {
	case Limit:
		if req.Price.Sign() <= 0 || !isMultiple(req.Price, m.spec.TickSize) {
			return bad("price %s must be a positive multiple of the tick %s", req.Price, m.spec.TickSize)
		}
	case Market:
	case StopMarket, TakeProfitMarket:
		if req.TriggerPrice.Sign() <= 0 || !isMultiple(req.TriggerPrice, m.spec.TickSize) {
			return bad("trigger price %s must be a positive multiple of the tick %s", req.TriggerPrice, m.spec.TickSize)
		}
	default:
		return bad("type must be LIMIT, MARKET, STOP_MARKET or TAKE_PROFIT_MARKET")
	}
	if req.PostOnly && req.Type != Limit {
		return bad("only limit orders can be post-only")
	}
	if req.Size.Sign() <= 0 || !isMultiple(req.Size, m.spec.LotSize) {
		return bad("size %s must be a positive multiple of the lot size %s", req.Size, m.spec.LotSize)
	}
	if len(req.ClientOrderID) > maxClientOrderID {
		return bad("client order id longer than %d characters", maxClientOrderID)
	}
	return nil
}

func opposite(s Side) PositionSide {
	if s == Buy {
		return Short
	}
	return Long
}

func (e *Engine) takerFee(notional decimal.Decimal) decimal.Decimal {
	return notional.Mul(e.cfg.TakerFeeBps).Div(bpsDivisor)
}

func (e *Engine) makerFee(notional decimal.Decimal) decimal.Decimal {
	return notional.Mul(e.cfg.MakerFeeBps).Div(bpsDivisor)
}

// checkMargin requires free collateral to cover the opening part of an
// order at price over leverage, plus its fee. Reduce-only orders pass.
func (e *Engine) checkMargin(a *account, m *market, side Side, size, price, fee decimal.Decimal, reduceOnly bool) error {
	if reduceOnly {
		return nil
	}
	opening := e.openingSize(a, m, side, size)
	lev := e.lev(a, m)
	need := opening.Mul(price).DivRound(decimal.NewFromInt(int64(lev)), 8).Add(fee)
	free := e.balance(a).FreeCollateral
	if need.GreaterThan(free) {
		return fmt.Errorf("%s %s %s at %dx needs %s, free collateral is %s: %w", side, size, m.spec.Symbol, lev, need, free, ErrInsufficientMargin)
	}
	return nil
}

func (e *Engine) register(a *account, m *market, o *order, status OrderStatus, t int64) {
	o.ID = e.nextOrderID()
	o.seq = e.orderSeq
	o.Status = status
	o.CreatedAt = timeOf(t)
	o.UpdatedAt = o.CreatedAt
	o.acct = a
	e.addLive(a, m, o)
	e.emitOrder(o)
}

// finish ends an order; an order that was live leaves the live indexes
// and is remembered among the account's closed orders.
func (e *Engine) finish(o *order, status OrderStatus, reason string, t int64) {
	wasLive := o.live()
	if wasLive {
		e.dropLive(o.acct, e.markets[strings.ToUpper(o.Market)], o)
	}
	o.Status = status
	o.Reason = reason
	o.UpdatedAt = timeOf(t)
	if wasLive {
		e.remember(o.acct, o)
	}
	e.emitOrder(o)
}

// sweep takes up to qty from the book side a taker of side trades against,
// not beyond limit, and returns the levels taken and the total.
func (m *market) sweep(side Side, qty, limit decimal.Decimal, t int64) ([]Level, decimal.Decimal) {
	var out []Level
	left := qty
	for i := 0; i < maxBookDepth && left.Sign() > 0; i++ {
		p := m.levelPrice(side, i)
		if p.Sign() <= 0 {
			break
		}
		if !limit.IsZero() && ((side == Buy && p.GreaterThan(limit)) || (side == Sell && p.LessThan(limit))) {
			break
		}
		take := decimal.Min(left, m.levelSize(side, i, t))
		out = append(out, Level{Price: p, Size: take})
		left = left.Sub(take)
	}
	return out, qty.Sub(left)
}

// plan sweeps the whole book for a market order and returns the levels and
// average price, or ErrInvalidOrder when the book is too thin.
func (m *market) plan(side Side, qty decimal.Decimal, t int64) ([]Level, decimal.Decimal, error) {
	levels, got := m.sweep(side, qty, decimal.Zero, t)
	if got.LessThan(qty) {
		return nil, decimal.Zero, fmt.Errorf("%s %s on %s: only %s available in %d book levels: %w", side, qty, m.spec.Symbol, got, maxBookDepth, ErrInvalidOrder)
	}
	return levels, levelsNotional(levels).DivRound(qty, 8), nil
}

// levelsNotional is what taking levels costs before fees.
func levelsNotional(levels []Level) decimal.Decimal {
	notional := decimal.Zero
	for _, l := range levels {
		notional = notional.Add(l.Size.Mul(l.Price))
	}
	return notional
}

// execute books one taker fill per level.
func (e *Engine) execute(a *account, m *market, o *order, levels []Level, t int64) {
	for _, l := range levels {
		e.applyFill(a, m, o, l.Size, l.Price, e.takerFee(l.Size.Mul(l.Price)), Taker, t)
	}
}

// checkOrders fills resting limits and fires triggers that mark crosses.
func (e *Engine) checkOrders(m *market, t int64) {
	if m.active.n == 0 {
		return
	}
	due := m.active.crossed(m.mark)
	// In placement order, as fills and their ids must replay the same.
	sortBySeq(due)
	for _, o := range due {
		if !o.live() {
			continue // cancelled by an earlier one's fill (position-linked)
		}
		if o.Type == Limit {
			e.fillResting(o.acct, m, o, t)
		} else {
			e.trigger(o.acct, m, o, t)
		}
	}
}

// reduceCap applies the reduce-only rule at execution time: it returns how
// much of the order may still fill, cancelling it when nothing may.
func (e *Engine) reduceCap(a *account, m *market, o *order, t int64) decimal.Decimal {
	left := o.Size.Sub(o.FilledSize)
	if !o.ReduceOnly {
		return left
	}
	c := closable(a.positions[m.spec.Symbol], o.Side, left)
	if c.IsZero() {
		e.finish(o, Cancelled, "reduce-only: no position left to reduce", t)
		return c
	}
	o.Size = o.FilledSize.Add(c)
	return c
}

func (e *Engine) fillResting(a *account, m *market, o *order, t int64) {
	qty := e.reduceCap(a, m, o, t)
	if qty.IsZero() {
		return
	}
	e.applyFill(a, m, o, qty, o.Price, e.makerFee(qty.Mul(o.Price)), Maker, t)
	e.finish(o, Filled, "", t)
}

func (e *Engine) trigger(a *account, m *market, o *order, t int64) {
	qty := e.reduceCap(a, m, o, t)
	if qty.IsZero() {
		return
	}
	levels, avg, err := m.plan(o.Side, qty, t)
	if err == nil {
		err = e.checkMargin(a, m, o.Side, qty, avg, e.takerFee(qty.Mul(avg)), o.ReduceOnly)
	}
	if err != nil {
		e.finish(o, Rejected, "triggered but "+err.Error(), t)
		return
	}
	e.execute(a, m, o, levels, t)
	e.finish(o, Filled, "", t)
}

// Order returns one of the account's orders by exchange id, in any state,
// or ErrOrderNotFound.
func (e *Engine) Order(id, orderID string) (res Order, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return Order{}, fmt.Errorf("order: %w", err)
	}
	o := a.orders[orderID]
	if o == nil {
		if ao, ok, err := e.archivedByID(id, orderID); err != nil {
			return Order{}, fmt.Errorf("order %s: %w", orderID, err)
		} else if ok {
			return ao, nil
		}
		return Order{}, fmt.Errorf("order %s: %w", orderID, ErrOrderNotFound)
	}
	return o.Order, nil
}

// OrderByClientID returns the account's newest order with that client
// order id, or ErrOrderNotFound.
func (e *Engine) OrderByClientID(id, clientOrderID string) (res Order, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return Order{}, fmt.Errorf("order by client id: %w", err)
	}
	if o := a.byClient[clientOrderID]; o != nil && clientOrderID != "" {
		return o.Order, nil
	}
	if e.archive != nil {
		if ao, ok, err := e.archive.archivedByClient(id, clientOrderID); err != nil {
			return Order{}, fmt.Errorf("order with client id %q: %w", clientOrderID, archiveErr(err))
		} else if ok {
			return ao, nil
		}
	}
	return Order{}, fmt.Errorf("order with client id %q: %w", clientOrderID, ErrOrderNotFound)
}

// OpenOrders returns the account's OPEN and PENDING orders, oldest first,
// on one market or (market "") all.
func (e *Engine) OpenOrders(id, market string) (res []Order, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return nil, fmt.Errorf("open orders: %w", err)
	}
	sym, err := e.symbolFilter(market)
	if err != nil {
		return nil, fmt.Errorf("open orders: %w", err)
	}
	out := []Order{}
	for _, o := range a.liveOrders(sym) {
		out = append(out, o.Order)
	}
	return out, nil
}

func (e *Engine) symbolFilter(market string) (string, error) {
	if market == "" {
		return "", nil
	}
	m, err := e.market(market)
	if err != nil {
		return "", err
	}
	return m.spec.Symbol, nil
}

// CancelOrder cancels an OPEN or PENDING order and returns it. Unknown ids
// are ErrOrderNotFound; orders already final are ErrOrderNotFound and
// ErrOrderClosed.
func (e *Engine) CancelOrder(id, orderID string) (res Order, err error) {
	now := e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return Order{}, fmt.Errorf("cancel order: %w", err)
	}
	o := a.orders[orderID]
	if o == nil {
		if ao, ok, err := e.archivedByID(id, orderID); err != nil {
			return Order{}, fmt.Errorf("cancel order %s: %w", orderID, err)
		} else if ok {
			return Order{}, fmt.Errorf("cancel order %s: it is %s: %w: %w", orderID, ao.Status, ErrOrderNotFound, ErrOrderClosed)
		}
		return Order{}, fmt.Errorf("cancel order %s: %w", orderID, ErrOrderNotFound)
	}
	if !o.live() {
		return Order{}, fmt.Errorf("cancel order %s: it is %s: %w: %w", orderID, o.Status, ErrOrderNotFound, ErrOrderClosed)
	}
	if err := e.write(record{Op: opCancel, Account: id, ID: orderID}); err != nil {
		return Order{}, fmt.Errorf("cancel order: %w", err)
	}
	e.cancel(o, now.Unix())
	return o.Order, nil
}

func (e *Engine) cancel(o *order, t int64) {
	e.finish(o, Cancelled, "", t)
}

// CancelAll cancels the account's OPEN and PENDING orders on one market or
// (market "") all, and returns how many it cancelled.
func (e *Engine) CancelAll(id, market string) (res int, err error) {
	now := e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return 0, fmt.Errorf("cancel all: %w", err)
	}
	sym, err := e.symbolFilter(market)
	if err != nil {
		return 0, fmt.Errorf("cancel all: %w", err)
	}
	if err := e.write(record{Op: opCancelAl, Account: id, Market: market}); err != nil {
		return 0, fmt.Errorf("cancel all: %w", err)
	}
	n := 0
	for _, o := range a.liveOrders(sym) {
		e.cancel(o, now.Unix())
		n++
	}
	return n, nil
}

// ClosePosition flattens the account's position on market with a
// reduce-only market order and returns the closed size and average price
// (zeros when there was no position).
func (e *Engine) ClosePosition(id, market string) (res Close, err error) {
	now := e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return Close{}, fmt.Errorf("close position: %w", err)
	}
	m, err := e.market(market)
	if err != nil {
		return Close{}, fmt.Errorf("close position: %w", err)
	}
	res = Close{Market: m.spec.Symbol}
	p := a.positions[m.spec.Symbol]
	if p == nil || p.size.IsZero() {
		return res, nil
	}
	if err := e.write(record{Op: opClose, Account: id, Market: market}); err != nil {
		return Close{}, fmt.Errorf("close position: %w", err)
	}
	side := Sell
	if p.size.Sign() < 0 {
		side = Buy
	}
	o, err := e.place(a, OrderRequest{Market: m.spec.Symbol, Side: side, Type: Market, Size: p.size.Abs(), ReduceOnly: true}, now.Unix())
	if err != nil {
		return Close{}, fmt.Errorf("close position: %w", err)
	}
	res.ClosedSize, res.AvgClosePrice, res.OrderID = o.FilledSize, o.AvgFillPrice, o.ID
	return res, nil
}

// archivedByID finds an order the account no longer holds in memory.
func (e *Engine) archivedByID(id, orderID string) (Order, bool, error) {
	if e.archive == nil {
		return Order{}, false, nil
	}
	o, ok, err := e.archive.archivedByID(id, orderID)
	return o, ok, archiveErr(err)
}

// archiveErr is a look-up the archive could not answer: whether the order
// exists is unknown, so the call fails as a journal fault rather than
// answer that it is not found.
func archiveErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrJournal, err)
}
