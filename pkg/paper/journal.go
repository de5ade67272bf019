package paper

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Journal is where an engine records every call that changes its state,
// so that a restarted engine replays them (Reopen) and comes back exactly
// as it was: accounts with their starting balances, orders, positions,
// fills, the id sequences and the price walk (which is deterministic from
// the seed and the clock).
//
// Recording has two phases so that concurrent calls share the cost of
// durability. The engine calls Write under its lock, before the change
// takes effect, so records are in the order the changes were made; it
// calls Sync after releasing the lock, and the caller hears of success
// only once Sync has returned. A change is thus applied in memory before
// it is durable, and a crash must leave a prefix of the records: never a
// change without an earlier one it may depend on.
type Journal interface {
	// Write appends record after every earlier one and returns its
	// position; positions increase with each record. The record need not
	// be durable yet.
	Write(record []byte) (pos uint64, err error)
	// Sync returns once every record up to pos is durable. Once it has
	// failed, Write must refuse every later record, since what reached
	// the store is unknown: the engine then fails closed. A journal that
	// can later learn what reached the store and make every earlier
	// record durable, in order, may then take records again.
	Sync(pos uint64) error
}

// ErrJournal means a change could not be recorded. Either it was not made,
// or (the journal failed to make it durable) it was made in memory but may
// not survive a restart, and the journal refuses every later change.
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
	opAmend    = "amend"
	opNote     = "note"
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
	// Snap, on a start record, names the snapshot the records after it
	// apply to (a compactor's Snapshot); zero when they start a new engine.
	Snap uint64 `json:"snap,omitempty"`
	// Note is a caller's line kept with the record (PlaceOrderNoted) or
	// alone (NoteDeferred); the engine only hands it back (Notes).
	Note json.RawMessage `json:"x,omitempty"`
}

// write records r unless the engine is replaying; callers hold e.mu and
// release it with unlockDurable, which waits until r is durable.
func (e *Engine) write(r record) error {
	if e.journal == nil || e.replaying {
		return nil
	}
	r.Time = e.cfg.Now()
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrJournal, err)
	}
	pos, err := e.journal.Write(b)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrJournal, err)
	}
	e.written = pos
	return nil
}

// unlockDurable ends a call that may change state: it releases e.mu and
// then, if the call succeeded and wrote records (e.written moved past
// from, its value when the call took the lock), waits until they are
// durable. Waiting outside the lock lets concurrent calls share fsyncs,
// and as Sync covers every earlier record, a call never succeeds before
// the changes it built on. Calls that wrote nothing do not wait, so they
// may report changes not yet durable. If Sync fails the call fails with
// ErrJournal and no result. Deferred right after taking the lock, which
// evaluates from then:
//
//	now := e.lock()
//	defer unlockDurable(e, e.written, &res, &err)
func unlockDurable[T any](e *Engine, from uint64, res *T, err *error) {
	wait := e.unlockDeferred(from)
	if *err != nil {
		return
	}
	if serr := wait(); serr != nil {
		var zero T
		*res, *err = zero, serr
	}
}

// unlockDeferred ends a change made under e.mu since the journal stood at
// from: it takes a snapshot when one is due, unlocks, and returns the wait
// that makes the change's records durable (ErrJournal when they cannot be).
func (e *Engine) unlockDeferred(from uint64) (wait func() error) {
	if e.written != from {
		e.snapshotIfDue()
	}
	pos, j := e.written, e.journal
	e.mu.Unlock()
	if pos == from {
		return noWait
	}
	return func() error {
		if err := j.Sync(pos); err != nil {
			return fmt.Errorf("%w: %v", ErrJournal, err)
		}
		return nil
	}
}

func noWait() error { return nil }

// Reopen returns an engine that records to journal, after replaying the
// records already in it (oldest first) with the clock set to each
// record's time. An empty journal starts a new engine and records its
// start time and seed; a journal's own seed wins over cfg.Seed, so the
// walk goes on where it was.
func Reopen(cfg Config, journal Journal, records [][]byte) (*Engine, error) {
	if len(records) == 0 {
		e := New(cfg)
		e.journal = journal
		e.archive = archiveOf(journal)
		e.mu.Lock()
		err := e.write(record{Op: opStart, Seed: e.cfg.Seed})
		var none struct{}
		unlockDurable(e, 0, &none, &err)
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
	if first.Snap != 0 {
		var snap []byte
		if c, ok := journal.(compactor); ok {
			snap = c.Snapshot()
		}
		if snap == nil {
			return nil, fmt.Errorf("paper journal: its records follow snapshot %d, which is missing", first.Snap)
		}
		var err error
		if e, err = restore(cfg, snap); err != nil {
			return nil, err
		}
	}
	e.archive = archiveOf(journal)
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

// NoteDeferred records note (a caller's log line, JSON) in the journal
// after every record so far, and returns the wait that makes it durable.
// Replay hands it back (Notes). The engine's state does not change.
func (e *Engine) NoteDeferred(note []byte) (wait func() error, err error) {
	if !json.Valid(note) {
		return nil, fmt.Errorf("%w: a note is not JSON", ErrJournal)
	}
	e.mu.Lock()
	from := e.written
	err = e.write(record{Op: opNote, Note: note})
	wait = e.unlockDeferred(from)
	if err != nil {
		return noWait, err
	}
	return wait, nil
}

// Notes returns, once, the notes replay found in the journal since its
// last snapshot, oldest first: a caller that keeps its own log without
// waiting for it (a caller's Hold) recovers from them what that log lost.
func (e *Engine) Notes() [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.notes
	e.notes = nil
	return n
}

// archiveOf returns the journal's order archive, if it keeps one.
func archiveOf(j Journal) archiver {
	if a, ok := j.(archiver); ok {
		return a
	}
	return nil
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
			// A placement refused then is refused now: its note goes with it.
			if _, err := e.PlaceOrder(r.Account, *r.Order); err == nil && r.Note != nil {
				e.notes = append(e.notes, r.Note)
			}
		}
	case opNote:
		if r.Note != nil {
			e.notes = append(e.notes, r.Note)
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
	case opAmend:
		if r.Order != nil {
			_, _ = e.AmendOrder(r.Account, r.ID, Amend{Size: r.Order.Size, Price: r.Order.Price, TriggerPrice: r.Order.TriggerPrice})
		}
	}
}
