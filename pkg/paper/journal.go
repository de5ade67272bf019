package paper

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Journal is where an engine records every call that changes its state,
// before the change takes effect, so that a restarted engine replays them
// (Reopen) and comes back exactly as it was: accounts with their starting
// balances, orders, positions, fills, the id sequences and the price walk
// (which is deterministic from the seed and the clock). Append must make
// the record durable before it returns.
type Journal interface {
	Append(record []byte) error
}

// ErrJournal means a change could not be recorded and was not made.
var ErrJournal = errors.New("paper engine: journal write failed")

// Journal operations.
const (
	opStart    = "start"
	opAccount  = "account"
	opPlace    = "place"
	opCancel   = "cancel"
	opCancelAl = "cancelAll"
	opClose    = "close"
	opLeverage = "leverage"
	opMark     = "mark"
)

// record is one journal line.
type record struct {
	Op       string          `json:"op"`
	Time     time.Time       `json:"t"`
	Seed     int64           `json:"seed,omitempty"`
	Account  string          `json:"a,omitempty"`
	Balance  decimal.Decimal `json:"b,omitzero"`
	Order    *OrderRequest   `json:"o,omitempty"`
	ID       string          `json:"id,omitempty"`
	Market   string          `json:"m,omitempty"`
	Leverage int             `json:"l,omitempty"`
	Price    decimal.Decimal `json:"p,omitzero"`
}

// write records r unless the engine is replaying; callers hold e.mu.
func (e *Engine) write(r record) error {
	if e.journal == nil || e.replaying {
		return nil
	}
	r.Time = e.cfg.Now()
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrJournal, err)
	}
	if err := e.journal.Append(b); err != nil {
		return fmt.Errorf("%w: %v", ErrJournal, err)
	}
	return nil
}

// Reopen returns an engine that records to journal, after replaying the
// records already in it (oldest first) with the clock set to each
// record's time. An empty journal starts a new engine and records its
// start time and seed; a journal's own seed wins over cfg.Seed, so the
// walk goes on where it was.
func Reopen(cfg Config, journal Journal, records [][]byte) (*Engine, error) {
	if len(records) == 0 {
		e := New(cfg)
		e.journal = journal
		e.mu.Lock()
		err := e.write(record{Op: opStart, Seed: e.cfg.Seed})
		e.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	var first record
	if err := json.Unmarshal(records[0], &first); err != nil || first.Op != opStart {
		return nil, fmt.Errorf("paper journal: the first record is not the engine's start")
	}
	clock := first.Time
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	cfg.Seed, cfg.Now = first.Seed, func() time.Time { return clock }
	e := New(cfg)
	e.replaying = true
	for i, raw := range records[1:] {
		var r record
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("paper journal: record %d: %w", i+2, err)
		}
		clock = r.Time
		e.apply(r) // a call that failed then fails the same way now
	}
	e.mu.Lock()
	e.replaying, e.journal, e.cfg.Now = false, journal, now
	e.mu.Unlock()
	return e, nil
}

// apply runs one recorded call again.
func (e *Engine) apply(r record) {
	switch r.Op {
	case opAccount:
		e.mu.Lock()
		if e.accounts[r.Account] == nil {
			_, _ = e.createAccount(r.Account, r.Balance)
		}
		e.mu.Unlock()
	case opPlace:
		if r.Order != nil {
			_, _ = e.PlaceOrder(r.Account, *r.Order)
		}
	case opCancel:
		_, _ = e.CancelOrder(r.Account, r.ID)
	case opCancelAl:
		_, _ = e.CancelAll(r.Account, r.Market)
	case opClose:
		_, _ = e.ClosePosition(r.Account, r.Market)
	case opLeverage:
		_, _ = e.SetLeverage(r.Account, r.Market, r.Leverage)
	case opMark:
		_, _ = e.SetMarkPrice(r.Market, r.Price)
	}
}
