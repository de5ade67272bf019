package paper

import (
	"slices"

	"github.com/shopspring/decimal"
)

// The indexes below keep every call's cost independent of how many orders
// an account has resting or has closed: a placement's margin check reads a
// cached sum instead of recomputing every open order's reservation, and
// look-ups go through maps instead of scanning the account's orders.

// acctBook is an account's live (OPEN and PENDING) orders on one market
// and the margin its open limit orders reserve, per side.
type acctBook struct {
	live    map[*order]struct{}
	reserve [2]reserve // buys, sells
}

// reserve is the cached margin of one side's open limit orders. It holds
// for the leverage and the position size it was computed at: an order's
// reservation is the part of it the position does not absorb, at its price
// over leverage, so when either changes the sum is recomputed once.
type reserve struct {
	sum    decimal.Decimal
	lev    int
	absorb decimal.Decimal // the opposite position's size, zero on its own side
	ok     bool
}

func sideIndex(s Side) int {
	if s == Sell {
		return 1
	}
	return 0
}

// book returns a's live-order index for m, creating it.
func (a *account) book(sym string) *acctBook {
	b := a.books[sym]
	if b == nil {
		b = &acctBook{live: make(map[*order]struct{})}
		a.books[sym] = b
	}
	return b
}

// reserves reports whether o counts toward order margin: an open limit
// order that is not reduce-only.
func reserves(o *order) bool {
	return o.Status == Open && o.Type == Limit && !o.ReduceOnly
}

// reserveKey is the leverage and absorbing position size a side's margin
// depends on.
func (e *Engine) reserveKey(a *account, m *market, side Side) (int, decimal.Decimal) {
	absorb := decimal.Zero
	if p := a.positions[m.spec.Symbol]; p != nil && !p.size.IsZero() && (side == Buy) != (p.size.Sign() > 0) {
		absorb = p.size.Abs()
	}
	return e.lev(a, m), absorb
}

// adjustReserve adds (sign 1) or removes (sign -1) o's current margin to
// or from its side's cached sum, when the sum is valid for the account's
// current leverage and position; otherwise the next read recomputes it.
// Callers bracket every change of o's remaining size with -1 and +1.
func (e *Engine) adjustReserve(a *account, m *market, o *order, sign int) {
	if !reserves(o) {
		return
	}
	b := a.books[m.spec.Symbol]
	if b == nil {
		return
	}
	r := &b.reserve[sideIndex(o.Side)]
	lev, absorb := e.reserveKey(a, m, o.Side)
	if !r.ok || r.lev != lev || !r.absorb.Equal(absorb) {
		r.ok = false
		return
	}
	if sign > 0 {
		r.sum = r.sum.Add(e.orderMargin(a, o))
	} else {
		r.sum = r.sum.Sub(e.orderMargin(a, o))
	}
}

// bookMargin is the margin a's open orders on m reserve.
func (e *Engine) bookMargin(a *account, m *market, b *acctBook) decimal.Decimal {
	total := decimal.Zero
	for i, side := range []Side{Buy, Sell} {
		r := &b.reserve[i]
		lev, absorb := e.reserveKey(a, m, side)
		if !r.ok || r.lev != lev || !r.absorb.Equal(absorb) {
			sum := decimal.Zero
			for o := range b.live {
				if o.Side == side && reserves(o) {
					sum = sum.Add(e.orderMargin(a, o))
				}
			}
			*r = reserve{sum: sum, lev: lev, absorb: absorb, ok: true}
		}
		total = total.Add(r.sum)
	}
	return total
}

// addLive indexes a newly registered order.
func (e *Engine) addLive(a *account, m *market, o *order) {
	a.orders[o.ID] = o
	if o.ClientOrderID != "" {
		a.byClient[o.ClientOrderID] = o
	}
	a.book(m.spec.Symbol).live[o] = struct{}{}
	o.heapIdx = -1
	m.active.add(o)
	e.adjustReserve(a, m, o, 1)
}

// dropLive takes an order that is about to end out of the live indexes;
// it stays remembered for look-ups until closedOrders forgets it.
func (e *Engine) dropLive(a *account, m *market, o *order) {
	e.adjustReserve(a, m, o, -1)
	delete(a.book(m.spec.Symbol).live, o)
	m.active.remove(o)
}

// remember keeps a final order for look-ups by id and client order id,
// forgetting the ones that ended longest ago beyond what the account
// keeps in memory: with an archive they go there, and look-ups find them
// on disk. An order the archive refused stays in memory.
func (e *Engine) remember(a *account, o *order) {
	a.closed = append(a.closed, o)
	keep := maxClosedOrders
	if e.archive != nil {
		keep = keepClosedArchived
	}
	for len(a.closed)-a.closedHead > keep {
		old := a.closed[a.closedHead]
		if e.archive != nil && e.archive.archive(a.id, old.Order, old.seq) != nil {
			return
		}
		a.closed[a.closedHead] = nil
		a.closedHead++
		delete(a.orders, old.ID)
		if a.byClient[old.ClientOrderID] == old {
			delete(a.byClient, old.ClientOrderID)
		}
	}
	if a.closedHead >= len(a.closed)/2 {
		a.closed = slices.Clone(a.closed[a.closedHead:])
		a.closedHead = 0
	}
}

// liveOrders returns a's live orders on market sym (all markets when sym
// is ""), oldest first.
func (a *account) liveOrders(sym string) []*order {
	var out []*order
	for s, b := range a.books {
		if sym != "" && s != sym {
			continue
		}
		for o := range b.live {
			out = append(out, o)
		}
	}
	sortBySeq(out)
	return out
}

func sortBySeq(os []*order) {
	slices.SortFunc(os, func(x, y *order) int {
		switch {
		case x.seq < y.seq:
			return -1
		case x.seq > y.seq:
			return 1
		}
		return 0
	})
}
