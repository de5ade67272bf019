package paper

import (
	"fmt"
	"sort"
	"strings"

	"github.com/shopspring/decimal"
)

// maxAccountID bounds account id length.
const maxAccountID = 128

// maxClosedOrders bounds the closed orders an account remembers without
// an archive.
const maxClosedOrders = 10000

type account struct {
	id        string
	wallet    decimal.Decimal
	realized  decimal.Decimal
	fees      decimal.Decimal
	funding   decimal.Decimal
	positions map[string]*position // by market symbol
	leverage  map[string]int
	orders    map[string]*order    // every remembered order by id
	byClient  map[string]*order    // the newest remembered order per client order id
	books     map[string]*acctBook // live orders by market symbol
	// closed holds final orders from closedHead on, in the order they
	// ended, so the oldest is forgotten first (remember).
	closed     []*order
	closedHead int
	fills      perMarket[Fill]
	fundings   perMarket[FundingPayment]
}

// position keeps a signed size and the absolute cost basis (Σ size·price
// of what is still open), so closing all of it realizes exact PnL.
type position struct {
	size decimal.Decimal
	cost decimal.Decimal
}

func (p *position) entry() decimal.Decimal {
	if p.size.IsZero() {
		return decimal.Zero
	}
	return p.cost.DivRound(p.size.Abs(), 8)
}

func (e *Engine) account(id string) (*account, error) {
	if a := e.accounts[id]; a != nil {
		return a, nil
	}
	return e.createAccount(id, e.cfg.StartingBalance)
}

func (e *Engine) createAccount(id string, balance decimal.Decimal) (*account, error) {
	if strings.TrimSpace(id) == "" || len(id) > maxAccountID {
		return nil, fmt.Errorf("account id %q: must be 1 to %d characters: %w", id, maxAccountID, ErrInvalidRequest)
	}
	if err := e.write(record{Op: opAccount, Account: id, Balance: balance}); err != nil {
		return nil, err
	}
	a := &account{
		id:        id,
		wallet:    balance,
		positions: make(map[string]*position),
		leverage:  make(map[string]int),
		orders:    make(map[string]*order),
		byClient:  make(map[string]*order),
		books:     make(map[string]*acctBook),
		fills:     perMarket[Fill]{},
		fundings:  perMarket[FundingPayment]{},
	}
	e.accounts[id] = a
	return a, nil
}

// EnsureAccount creates the account with startingBalance (the configured
// default when zero) unless it exists, and returns its balance. An existing
// account is left as it is. A negative balance or an empty id is
// ErrInvalidRequest.
func (e *Engine) EnsureAccount(id string, startingBalance decimal.Decimal) (res Balance, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	if startingBalance.Sign() < 0 {
		return Balance{}, fmt.Errorf("ensure account %s: starting balance %s is negative: %w", id, startingBalance, ErrInvalidRequest)
	}
	if startingBalance.IsZero() {
		startingBalance = e.cfg.StartingBalance
	}
	a := e.accounts[id]
	if a == nil {
		if a, err = e.createAccount(id, startingBalance); err != nil {
			return Balance{}, fmt.Errorf("ensure account: %w", err)
		}
	}
	return e.balance(a), nil
}

// Balance returns the account's balance, creating the account if new.
func (e *Engine) Balance(id string) (res Balance, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return Balance{}, fmt.Errorf("balance: %w", err)
	}
	return e.balance(a), nil
}

func (e *Engine) balance(a *account) Balance {
	b := Balance{
		Account:     a.id,
		Wallet:      a.wallet,
		RealizedPnL: a.realized,
		FeesPaid:    a.fees,
		FundingPaid: a.funding,
	}
	for sym, p := range a.positions {
		if p.size.IsZero() {
			continue
		}
		m := e.markets[strings.ToUpper(sym)]
		b.UnrealizedPnL = b.UnrealizedPnL.Add(unrealized(p, m.mark))
		b.PositionMargin = b.PositionMargin.Add(e.positionMargin(a, m, p))
	}
	for sym, bk := range a.books {
		b.OrderMargin = b.OrderMargin.Add(e.bookMargin(a, e.markets[strings.ToUpper(sym)], bk))
	}
	b.Equity = b.Wallet.Add(b.UnrealizedPnL)
	b.AccountValue = b.Equity
	b.FreeCollateral = b.Equity.Sub(b.PositionMargin).Sub(b.OrderMargin)
	return b
}

func unrealized(p *position, mark decimal.Decimal) decimal.Decimal {
	if p.size.Sign() > 0 {
		return p.size.Mul(mark).Sub(p.cost)
	}
	return p.cost.Sub(p.size.Abs().Mul(mark))
}

func (e *Engine) lev(a *account, m *market) int {
	if l, ok := a.leverage[m.spec.Symbol]; ok {
		return l
	}
	return min(e.cfg.DefaultLeverage, m.spec.MaxLeverage)
}

func (e *Engine) positionMargin(a *account, m *market, p *position) decimal.Decimal {
	return p.size.Abs().Mul(m.mark).DivRound(decimal.NewFromInt(int64(e.lev(a, m))), 8)
}

// orderMargin is what an open limit order reserves: the part that would
// open exposure, at its price, over leverage. Reduce-only orders reserve
// nothing.
func (e *Engine) orderMargin(a *account, o *order) decimal.Decimal {
	if o.ReduceOnly || o.Type != Limit {
		return decimal.Zero
	}
	m := e.markets[strings.ToUpper(o.Market)]
	opening := e.openingSize(a, m, o.Side, o.Size.Sub(o.FilledSize))
	return opening.Mul(o.Price).DivRound(decimal.NewFromInt(int64(e.lev(a, m))), 8)
}

// openingSize is the part of qty on side that would not just reduce the
// current position.
func (e *Engine) openingSize(a *account, m *market, side Side, qty decimal.Decimal) decimal.Decimal {
	return qty.Sub(closable(a.positions[m.spec.Symbol], side, qty))
}

// closable is how much of qty on side would reduce p.
func closable(p *position, side Side, qty decimal.Decimal) decimal.Decimal {
	if p == nil || p.size.IsZero() {
		return decimal.Zero
	}
	if (side == Buy) == (p.size.Sign() > 0) {
		return decimal.Zero
	}
	return decimal.Min(qty, p.size.Abs())
}

// Positions returns the account's open positions, on one market or (market
// "") all, sorted by market.
func (e *Engine) Positions(id, market string) (res []Position, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return nil, fmt.Errorf("positions: %w", err)
	}
	if market != "" {
		m, err := e.market(market)
		if err != nil {
			return nil, fmt.Errorf("positions: %w", err)
		}
		market = m.spec.Symbol
	}
	out := []Position{}
	for sym, p := range a.positions {
		if p.size.IsZero() || (market != "" && sym != market) {
			continue
		}
		m := e.markets[strings.ToUpper(sym)]
		side := Long
		if p.size.Sign() < 0 {
			side = Short
		}
		out = append(out, Position{
			Market:        sym,
			Side:          side,
			Size:          p.size.Abs(),
			EntryPrice:    p.entry(),
			MarkPrice:     m.mark,
			UnrealizedPnL: unrealized(p, m.mark),
			Notional:      p.size.Abs().Mul(m.mark),
			Margin:        e.positionMargin(a, m, p),
			Leverage:      e.lev(a, m),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Market < out[j].Market })
	return out, nil
}

// Leverage returns the account's leverage on a market.
func (e *Engine) Leverage(id, market string) (res int, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return 0, fmt.Errorf("leverage: %w", err)
	}
	m, err := e.market(market)
	if err != nil {
		return 0, fmt.Errorf("leverage: %w", err)
	}
	return e.lev(a, m), nil
}

// SetLeverage sets the account's leverage on a market, 1 to the market's
// maximum (else ErrInvalidOrder). Lowering it so far that free collateral
// would turn negative is ErrInsufficientMargin.
func (e *Engine) SetLeverage(id, market string, leverage int) (res int, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return 0, fmt.Errorf("set leverage: %w", err)
	}
	m, err := e.market(market)
	if err != nil {
		return 0, fmt.Errorf("set leverage: %w", err)
	}
	if leverage < 1 || leverage > m.spec.MaxLeverage {
		return 0, fmt.Errorf("set leverage %d on %s: must be 1 to %d: %w", leverage, m.spec.Symbol, m.spec.MaxLeverage, ErrInvalidOrder)
	}
	if err := e.write(record{Op: opLeverage, Account: id, Market: market, Leverage: leverage}); err != nil {
		return 0, fmt.Errorf("set leverage: %w", err)
	}
	old, had := a.leverage[m.spec.Symbol]
	a.leverage[m.spec.Symbol] = leverage
	if leverage < old || !had {
		if b := e.balance(a); b.FreeCollateral.Sign() < 0 {
			if had {
				a.leverage[m.spec.Symbol] = old
			} else {
				delete(a.leverage, m.spec.Symbol)
			}
			return 0, fmt.Errorf("set leverage %d on %s: margin would exceed equity: %w", leverage, m.spec.Symbol, ErrInsufficientMargin)
		}
	}
	return leverage, nil
}

// applyFill books a fill: position, realized PnL and fee into the wallet.
func (e *Engine) applyFill(a *account, m *market, o *order, qty, price, fee decimal.Decimal, liq Liquidity, t int64) Fill {
	sym := m.spec.Symbol
	p := a.positions[sym]
	if p == nil {
		p = &position{}
		a.positions[sym] = p
	}
	e.adjustReserve(a, m, o, -1)
	realized := decimal.Zero
	closeQty := closable(p, o.Side, qty)
	if closeQty.Sign() > 0 {
		removed := p.cost
		if closeQty.LessThan(p.size.Abs()) {
			removed = p.cost.Mul(closeQty).Div(p.size.Abs())
		}
		if p.size.Sign() > 0 {
			realized = closeQty.Mul(price).Sub(removed)
			p.size = p.size.Sub(closeQty)
		} else {
			realized = removed.Sub(closeQty.Mul(price))
			p.size = p.size.Add(closeQty)
		}
		p.cost = p.cost.Sub(removed)
	}
	if open := qty.Sub(closeQty); open.Sign() > 0 {
		if o.Side == Buy {
			p.size = p.size.Add(open)
		} else {
			p.size = p.size.Sub(open)
		}
		p.cost = p.cost.Add(open.Mul(price))
	}
	closed := p.size.IsZero()
	if closed {
		delete(a.positions, sym)
	}
	a.wallet = a.wallet.Add(realized).Sub(fee)
	a.realized = a.realized.Add(realized)
	a.fees = a.fees.Add(fee)

	when := timeOf(t)
	f := Fill{
		ID:            e.nextFillID(),
		OrderID:       o.ID,
		ClientOrderID: o.ClientOrderID,
		Market:        sym,
		Side:          o.Side,
		Size:          qty,
		Price:         price,
		Fee:           fee,
		Liquidity:     liq,
		RealizedPnL:   realized,
		Time:          when,
	}
	a.fills.add(sym, f)
	m.record(t, m.mark, qty)

	o.notional = o.notional.Add(qty.Mul(price))
	o.FilledSize = o.FilledSize.Add(qty)
	o.AvgFillPrice = o.notional.DivRound(o.FilledSize, 8)
	o.Fee = o.Fee.Add(fee)
	o.UpdatedAt = when
	e.adjustReserve(a, m, o, 1)
	e.emitFill(a, m, f)
	if closed { // after the fill's events, so a cancelled stop follows the fill that closed it
		e.dropLinked(a, m, o, t)
	}
	return f
}

// Fills returns the account's most recent fills, newest first, on one
// market or (market "") all; limit <= 0 means 100.
func (e *Engine) Fills(id, market string, limit int) (res []Fill, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return nil, fmt.Errorf("fills: %w", err)
	}
	if market != "" {
		m, err := e.market(market)
		if err != nil {
			return nil, fmt.Errorf("fills: %w", err)
		}
		market = m.spec.Symbol
	}
	if limit <= 0 {
		limit = 100
	}
	return a.fills.newest(market, limit, fillNewer, func(Fill) bool { return true }), nil
}

// dropLinked cancels the account's position-linked orders on m once its
// position there is closed, except the order whose fill closed it: a
// protection pair does not outlive its position.
func (e *Engine) dropLinked(a *account, m *market, closing *order, t int64) {
	for _, o := range a.liveOrders(m.spec.Symbol) {
		if o != closing && o.PositionLinked {
			e.finish(o, Cancelled, "position closed", t)
		}
	}
}
