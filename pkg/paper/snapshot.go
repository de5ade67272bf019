package paper

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// A snapshot is the whole engine at one moment: a journal that can keep
// one (compactor) starts afresh from it, so a restart restores it and
// replays only the records written since, instead of every call the
// engine ever served.

// compactor is a Journal that keeps snapshots.
type compactor interface {
	// Snapshot returns the state the journal's records start from, or
	// nil when they start from a new engine; the journal forgets it then.
	Snapshot() []byte
	// CompactDue reports whether enough records were written since the
	// last snapshot to take another.
	CompactDue() bool
	// Compact makes state (of an engine with seed) what the journal
	// starts from and drops every record written so far; the engine holds
	// its lock meanwhile, so state reflects exactly those records.
	Compact(seed int64, state []byte) error
}

type engineState struct {
	Seed     int64          `json:"seed"`
	LastStep int64          `json:"lastStep"`
	OrderSeq uint64         `json:"orderSeq"`
	FillSeq  uint64         `json:"fillSeq"`
	Markets  []marketState  `json:"markets"`
	Accounts []accountState `json:"accounts"`
}

type marketState struct {
	Symbol    string          `json:"symbol"`
	RNG       []byte          `json:"rng"`
	Mark      decimal.Decimal `json:"mark"`
	Index     decimal.Decimal `json:"index"`
	Start     int64           `json:"start"`
	FirstOpen decimal.Decimal `json:"firstOpen"`
	Bars      []barState      `json:"bars"`
}

type barState struct {
	Minute                         int64
	Open, High, Low, Close, Volume decimal.Decimal
}

type accountState struct {
	ID        string                        `json:"id"`
	Wallet    decimal.Decimal               `json:"wallet"`
	Realized  decimal.Decimal               `json:"realized"`
	Fees      decimal.Decimal               `json:"fees"`
	Funding   decimal.Decimal               `json:"funding"`
	Positions map[string][2]decimal.Decimal `json:"positions"` // size, cost
	Leverage  map[string]int                `json:"leverage"`
	Orders    []orderState                  `json:"orders"`   // every remembered order, oldest first
	Closed    []uint64                      `json:"closed"`   // seq of the remembered final orders, in the order they ended
	Fills     []Fill                        `json:"fills"`    // oldest first
	Fundings  []FundingPayment              `json:"fundings"` // oldest first
}

type orderState struct {
	Order
	Notional decimal.Decimal `json:"notional"`
	Seq      uint64          `json:"seq"`
}

// state captures the engine; e.mu is held.
func (e *Engine) state() engineState {
	st := engineState{Seed: e.cfg.Seed, LastStep: e.lastStep, OrderSeq: e.orderSeq, FillSeq: e.fillSeq}
	for _, m := range e.ordered {
		rng, _ := m.pcg.MarshalBinary()
		ms := marketState{Symbol: m.spec.Symbol, RNG: rng, Mark: m.mark, Index: m.index, Start: m.start, FirstOpen: m.firstOpen}
		for _, b := range m.bars {
			ms.Bars = append(ms.Bars, barState{b.minute, b.open, b.high, b.low, b.close, b.volume})
		}
		st.Markets = append(st.Markets, ms)
	}
	for _, a := range e.sortedAccounts() {
		as := accountState{ID: a.id, Wallet: a.wallet, Realized: a.realized, Fees: a.fees, Funding: a.funding,
			Positions: map[string][2]decimal.Decimal{}, Leverage: a.leverage,
			Fills: a.fills.oldestFirst(fillNewer), Fundings: a.fundings.oldestFirst(fundingNewer)}
		for sym, p := range a.positions {
			as.Positions[sym] = [2]decimal.Decimal{p.size, p.cost}
		}
		orders := make([]*order, 0, len(a.orders))
		for _, o := range a.orders {
			orders = append(orders, o)
		}
		sortBySeq(orders)
		for _, o := range orders {
			as.Orders = append(as.Orders, orderState{Order: o.Order, Notional: o.notional, Seq: o.seq})
		}
		for _, o := range a.closed[a.closedHead:] {
			as.Closed = append(as.Closed, o.seq)
		}
		st.Accounts = append(st.Accounts, as)
	}
	return st
}

// restore returns an engine in state st, with cfg's other settings.
func restore(cfg Config, raw []byte) (*Engine, error) {
	var st engineState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("paper snapshot: %w", err)
	}
	cfg.Seed = st.Seed
	e := New(cfg)
	e.lastStep, e.orderSeq, e.fillSeq = st.LastStep, st.OrderSeq, st.FillSeq
	for _, ms := range st.Markets {
		m := e.markets[strings.ToUpper(ms.Symbol)]
		if m == nil {
			return nil, fmt.Errorf("paper snapshot: market %s is no longer configured", ms.Symbol)
		}
		if err := m.pcg.UnmarshalBinary(ms.RNG); err != nil {
			return nil, fmt.Errorf("paper snapshot: market %s: %w", ms.Symbol, err)
		}
		m.mark, m.index, m.start, m.firstOpen = ms.Mark, ms.Index, ms.Start, ms.FirstOpen
		m.bars = m.bars[:0]
		for _, b := range ms.Bars {
			m.bars = append(m.bars, bar{b.Minute, b.Open, b.High, b.Low, b.Close, b.Volume})
		}
	}
	for _, as := range st.Accounts {
		a := &account{id: as.ID, wallet: as.Wallet, realized: as.Realized, fees: as.Fees, funding: as.Funding,
			positions: map[string]*position{}, leverage: as.Leverage, orders: map[string]*order{},
			byClient: map[string]*order{}, books: map[string]*acctBook{}, fills: perMarket[Fill]{}, fundings: perMarket[FundingPayment]{}}
		for _, f := range as.Fills {
			a.fills.add(f.Market, f)
		}
		for _, p := range as.Fundings {
			a.fundings.add(p.Market, p)
		}
		if a.leverage == nil {
			a.leverage = map[string]int{}
		}
		for sym, p := range as.Positions {
			a.positions[sym] = &position{size: p[0], cost: p[1]}
		}
		bySeq := make(map[uint64]*order, len(as.Orders))
		for _, os := range as.Orders {
			o := &order{Order: os.Order, notional: os.Notional, acct: a, seq: os.Seq, heapIdx: -1}
			bySeq[o.seq] = o
			m := e.markets[strings.ToUpper(o.Market)]
			if m == nil {
				return nil, fmt.Errorf("paper snapshot: order %s on market %s, no longer configured", o.ID, o.Market)
			}
			if o.live() {
				e.addLive(a, m, o)
				continue
			}
			a.orders[o.ID] = o
			if o.ClientOrderID != "" {
				a.byClient[o.ClientOrderID] = o
			}
		}
		for _, seq := range as.Closed {
			if o := bySeq[seq]; o != nil {
				a.closed = append(a.closed, o)
			}
		}
		e.accounts[a.id] = a
	}
	return e, nil
}

// snapshotIfDue hands the journal a snapshot when it asks for one; e.mu
// is held and every record written so far has taken effect. A snapshot
// that fails is tried again after the next change: the journal keeps
// every record, but it grows, and so does the replay at the next start,
// which is why failures are logged (once a minute while they go on).
func (e *Engine) snapshotIfDue() {
	c, ok := e.journal.(compactor)
	if !ok || e.replaying || !c.CompactDue() {
		return
	}
	raw, err := json.Marshal(e.state())
	if err == nil {
		err = c.Compact(e.cfg.Seed, raw)
	}
	now := e.cfg.Now()
	switch {
	case err != nil:
		e.snapFailed++
		if e.snapFailed == 1 || now.Sub(e.snapLogged) >= time.Minute {
			e.snapLogged = now
			e.cfg.Log.Warn("paper snapshot failed; the journal keeps every record and grows until one is taken, and a restart replays them all",
				"err", err, "failures", e.snapFailed)
		}
	case e.snapFailed > 0:
		e.cfg.Log.Info("paper snapshot taken again", "failures_before", e.snapFailed)
		e.snapFailed = 0
	}
}
