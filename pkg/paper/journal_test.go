package paper

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

type memJournal struct {
	mu      sync.Mutex
	records [][]byte
	fail    bool
}

func (j *memJournal) Append(r []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail {
		return errors.New("disk full")
	}
	j.records = append(j.records, append([]byte(nil), r...))
	return nil
}

// TestJournalReplay: an engine reopened from its journal has the same
// accounts (with their starting balances), orders, positions, fills and id
// sequence, and its walk goes on where it was.
func TestJournalReplay(t *testing.T) {
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	j := &memJournal{}
	e, err := Reopen(Config{Seed: 7, Now: clock.Now}, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := decimal.RequireFromString
	if _, err := e.EnsureAccount("alice", d("5000")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(90 * time.Second)
	mustPlace := func(req OrderRequest) Order {
		o, err := e.PlaceOrder("alice", req)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	mustPlace(OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Market, Size: d("0.01")})
	clock.Advance(30 * time.Second)
	resting := mustPlace(OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: d("0.01"), Price: d("50000"), ClientOrderID: "r1"})
	gone := mustPlace(OrderRequest{Market: "ETH-USD-PERP", Side: Sell, Type: Limit, Size: d("0.1"), Price: d("9000")})
	if _, err := e.CancelOrder("alice", gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SetLeverage("alice", "BTC-USD-PERP", 3); err != nil {
		t.Fatal(err)
	}
	_, _ = e.PlaceOrder("alice", OrderRequest{Market: "NOPE", Side: Buy, Type: Market, Size: d("1")}) // refused, also on replay
	_, _ = e.Balance("bob")                                                                           // created lazily with the default
	clock.Advance(45 * time.Second)

	state := func(e *Engine) []any {
		b, _ := e.Balance("alice")
		ps, _ := e.Positions("alice", "")
		os, _ := e.OpenOrders("alice", "")
		fs, _ := e.Fills("alice", "", 100)
		bob, _ := e.Balance("bob")
		mark, _ := e.MarkPrice("BTC-USD-PERP")
		lev, _ := e.Leverage("alice", "BTC-USD-PERP")
		byCID, _ := e.OrderByClientID("alice", "r1")
		return []any{b, ps, os, fs, bob.Wallet, mark, lev, byCID}
	}
	before := state(e)
	again, err := Reopen(Config{Seed: 99, Now: clock.Now}, j, j.records) // a changed seed does not change the past
	if err != nil {
		t.Fatal(err)
	}
	if after := state(again); !reflect.DeepEqual(before, after) {
		t.Fatalf("state after replay differs:\nbefore %+v\nafter  %+v", before, after)
	}
	if b, _ := again.Balance("alice"); !b.Wallet.LessThan(d("5000")) || !b.Wallet.GreaterThan(d("4990")) {
		t.Fatalf("alice's wallet %s: want the 5000 she started with, less fees", b.Wallet)
	}
	next, _ := again.PlaceOrder("alice", OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: d("0.01"), Price: d("50000")})
	if next.ID <= resting.ID || next.ID == gone.ID {
		t.Fatalf("order id %s after replay does not follow %s", next.ID, gone.ID)
	}
	clock.Advance(time.Hour) // the walk goes on identically in both
	m1, _ := e.MarkPrice("ETH-USD-PERP")
	m2, _ := again.MarkPrice("ETH-USD-PERP")
	if !m1.Mark.Equal(m2.Mark) {
		t.Fatalf("walks diverged: %s vs %s", m1.Mark, m2.Mark)
	}
}

// TestJournalFailureChangesNothing: a change that cannot be recorded is
// refused and not made.
func TestJournalFailureChangesNothing(t *testing.T) {
	j := &memJournal{}
	e, err := Reopen(Config{Seed: 1}, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EnsureAccount("a", decimal.Zero); err != nil {
		t.Fatal(err)
	}
	j.fail = true
	_, err = e.PlaceOrder("a", OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000")})
	if !errors.Is(err, ErrJournal) {
		t.Fatalf("got %v, want ErrJournal", err)
	}
	if os, _ := e.OpenOrders("a", ""); len(os) != 0 {
		t.Fatalf("an unrecorded order was placed: %v", os)
	}
}
