package paper

import (
	"cmp"
	"slices"
	"strconv"
	"time"
)

// EventKind names what an Event carries.
type EventKind string

// Event kinds.
const (
	EventOrder    EventKind = "order"
	EventFill     EventKind = "fill"
	EventPosition EventKind = "position"
	EventBalance  EventKind = "balance"
	EventFunding  EventKind = "funding"
)

// Flat is the side of a position event once the position closed.
const Flat PositionSide = "FLAT"

// Event is one change of an account, in the order the engine made it:
// exactly one of Order, Fill, Position, Balance, Funding is set, as Kind
// says.
type Event struct {
	Account  string
	Kind     EventKind
	Time     time.Time
	Order    *Order
	Fill     *Fill
	Position *Position // Side Flat and Size zero once closed
	Balance  *Balance
	Funding  *FundingPayment
}

// OnEvent makes the engine call sink with every account change as it
// happens, under the engine's lock and in order, so sink must return
// quickly (queue it) and must not call the engine. Replaying a journal
// emits nothing. A nil sink stops the events.
func (e *Engine) OnEvent(sink func(Event)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sink = sink
}

// Tick brings the walk up to now, so resting orders fill and stops trigger
// (and their events go out) even while nobody calls the engine.
func (e *Engine) Tick() {
	e.lock()
	e.mu.Unlock()
}

// emit hands ev to the sink; e.mu is held.
func (e *Engine) emit(ev Event) {
	if e.sink == nil || e.replaying {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = e.cfg.Now()
	}
	e.sink(ev)
}

func (e *Engine) emitOrder(o *order) {
	if e.sink == nil {
		return
	}
	snap := o.Order
	e.emit(Event{Account: o.acct.id, Kind: EventOrder, Time: o.UpdatedAt, Order: &snap})
}

// emitFill sends the fill, then the position and balance it changed.
func (e *Engine) emitFill(a *account, m *market, f Fill) {
	if e.sink == nil {
		return
	}
	e.emit(Event{Account: a.id, Kind: EventFill, Time: f.Time, Fill: &f})
	e.emitPosition(a, m, f.Time)
	e.emitBalance(a, f.Time)
}

func (e *Engine) emitPosition(a *account, m *market, t time.Time) {
	pos := Position{Market: m.spec.Symbol, Side: Flat, MarkPrice: m.mark, Leverage: e.lev(a, m)}
	if p := a.positions[m.spec.Symbol]; p != nil && !p.size.IsZero() {
		pos.Side = Long
		if p.size.Sign() < 0 {
			pos.Side = Short
		}
		pos.Size, pos.EntryPrice = p.size.Abs(), p.entry()
		pos.UnrealizedPnL = unrealized(p, m.mark)
		pos.Notional = pos.Size.Mul(m.mark)
		pos.Margin = e.positionMargin(a, m, p)
	}
	e.emit(Event{Account: a.id, Kind: EventPosition, Time: t, Position: &pos})
}

func (e *Engine) emitBalance(a *account, t time.Time) {
	b := e.balance(a)
	e.emit(Event{Account: a.id, Kind: EventBalance, Time: t, Balance: &b})
}

// emitFunding sends a funding settlement and the balance it changed.
func (e *Engine) emitFunding(a *account, pay FundingPayment, t int64) {
	if e.sink == nil {
		return
	}
	when := timeOf(t)
	e.emit(Event{Account: a.id, Kind: EventFunding, Time: when, Funding: &pay})
	e.emitBalance(a, when)
}

// Accounts returns the ids of every account, sorted.
func (e *Engine) Accounts() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.accounts))
	for _, a := range e.sortedAccounts() {
		out = append(out, a.id)
	}
	return out
}

// OrdersUpdatedSince returns the account's remembered orders, in any
// state, last changed at or after t, oldest first.
func (e *Engine) OrdersUpdatedSince(id string, t time.Time) (res []Order, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a := e.accounts[id]
	if a == nil {
		return nil, nil
	}
	for _, o := range a.orders {
		if !o.UpdatedAt.Before(t) {
			res = append(res, o.Order)
		}
	}
	// Oldest change first; ids break ties in the order orders were made.
	slices.SortFunc(res, func(x, y Order) int {
		if c := x.UpdatedAt.Compare(y.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(orderSeq(x.ID), orderSeq(y.ID))
	})
	return res, nil
}

// orderSeq is an order id's number (ids count up), or 0 for one that is not.
func orderSeq(id string) uint64 {
	n, _ := strconv.ParseUint(id, 10, 64)
	return n
}
