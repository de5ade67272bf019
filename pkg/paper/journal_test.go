package paper

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

type memJournal struct {
	mu      sync.Mutex
	records [][]byte
	fail    bool
}

func (j *memJournal) Write(r []byte) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail {
		return 0, errors.New("disk full")
	}
	j.records = append(j.records, append([]byte(nil), r...))
	return uint64(len(j.records)), nil
}

func (j *memJournal) Sync(uint64) error { return nil }

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

// TestFileJournalConcurrentPlacements: orders placed at once from many
// goroutines all succeed, and an engine reopened from the file has every
// one of them, with the same ids.
func TestFileJournalConcurrentPlacements(t *testing.T) {
	path := filepath.Join(t.TempDir(), "paper.journal")
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	j, e := openFileEngine(t, path, Config{Seed: 5, Now: clock.Now})
	const goroutines, perGoroutine = 16, 10
	accounts := []string{"a", "b", "c", "d"}
	type placement struct {
		acct  string
		order Order
	}
	placed := make(chan placement, goroutines*perGoroutine)
	errs := make(chan error, goroutines*perGoroutine)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perGoroutine {
				acct := accounts[g%len(accounts)]
				o, err := e.PlaceOrder(acct, OrderRequest{
					Market: "BTC-USD-PERP", Side: Buy, Type: Limit,
					Size: decimal.RequireFromString("0.001"), Price: decimal.RequireFromString("50000"),
					ClientOrderID: fmt.Sprintf("g%d-%d", g, i),
				})
				if err != nil {
					errs <- err
					return
				}
				placed <- placement{acct, o}
			}
		}()
	}
	wg.Wait()
	close(placed)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(placed) != goroutines*perGoroutine {
		t.Fatalf("%d orders placed, want %d", len(placed), goroutines*perGoroutine)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	j2, again := openFileEngine(t, path, Config{Seed: 5, Now: clock.Now})
	defer j2.Close()
	for p := range placed {
		got, err := again.Order(p.acct, p.order.ID)
		if err != nil {
			t.Fatalf("order %s (%s) after reopening: %v", p.order.ID, p.order.ClientOrderID, err)
		}
		if !reflect.DeepEqual(got, p.order) {
			t.Fatalf("order after reopening:\n got %+v\nwant %+v", got, p.order)
		}
	}
}

// syncJournal is a memJournal whose Sync can fail or block.
type syncJournal struct {
	memJournal
	syncs   atomic.Int32
	syncErr error         // returned by every Sync
	block   chan struct{} // the first Sync waits until it is closed
	inSync  chan struct{} // closed when the first Sync begins
}

func (j *syncJournal) Sync(pos uint64) error {
	if j.syncs.Add(1) == 1 && j.block != nil {
		close(j.inSync)
		<-j.block
	}
	return j.syncErr
}

// TestJournalSyncFailure: a change whose record cannot be made durable is
// reported as failed, with no result.
func TestJournalSyncFailure(t *testing.T) {
	j := &syncJournal{}
	e, err := Reopen(Config{Seed: 1}, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	j.syncErr = errors.New("fsync: input/output error")
	o, err := e.PlaceOrder("a", OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000")})
	if !errors.Is(err, ErrJournal) {
		t.Fatalf("got %v, want ErrJournal", err)
	}
	if o != (Order{}) {
		t.Fatalf("a failed placement returned %+v", o)
	}
	if _, err := e.SetMarkPrice("BTC-USD-PERP", decimal.NewFromInt(60000)); !errors.Is(err, ErrJournal) {
		t.Fatalf("set mark price: got %v, want ErrJournal", err)
	}
}

// TestJournalSyncOutsideLock: a call waiting for its record to be durable
// does not hold the engine, and calls that write nothing do not sync.
func TestJournalSyncOutsideLock(t *testing.T) {
	j := &syncJournal{}
	e, err := Reopen(Config{Seed: 1}, j, nil) // its start record takes the first Sync
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EnsureAccount("a", decimal.Zero); err != nil {
		t.Fatal(err)
	}
	j.syncs.Store(0)
	j.block, j.inSync = make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := e.PlaceOrder("a", OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000")})
		done <- err
	}()
	select {
	case <-j.inSync:
	case err := <-done:
		t.Fatalf("the placement returned (%v) without syncing", err)
	}
	// The placement is applied but not yet durable: other calls go on.
	within(t, func() error { _, err := e.Balance("a"); return err })
	if n := j.syncs.Load(); n != 1 {
		t.Fatalf("a call that wrote nothing synced: %d syncs", n)
	}
	within(t, func() error { _, err := e.SetLeverage("a", "ETH-USD-PERP", 2); return err })
	select {
	case err := <-done:
		t.Fatalf("the placement returned (%v) before its record was durable", err)
	default:
	}
	close(j.block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := j.syncs.Load(); n != 2 {
		t.Fatalf("%d syncs, want one per writing call", n)
	}
}

// within fails the test unless call returns nil in time: a call stuck
// behind the engine's lock would otherwise hang the test.
func within(t *testing.T, call func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call waited for another call's sync")
	}
}

// TestPlaceOrderDeferred: the deferred placement answers before its
// record is durable and hands over the wait that makes it so; a failed
// sync fails the wait with ErrJournal.
func TestPlaceOrderDeferred(t *testing.T) {
	j := &syncJournal{}
	e, err := Reopen(Config{Seed: 1}, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EnsureAccount("a", decimal.Zero); err != nil {
		t.Fatal(err)
	}
	j.syncs.Store(0)
	req := OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000")}
	o, wait, err := e.PlaceOrderDeferred("a", req)
	if err != nil || o.Status != Open {
		t.Fatalf("deferred placement: %+v, %v", o, err)
	}
	if n := j.syncs.Load(); n != 0 {
		t.Fatalf("the deferred placement synced %d times before its wait ran", n)
	}
	if err := wait(); err != nil || j.syncs.Load() != 1 {
		t.Fatalf("wait: %v after %d syncs, want nil after 1", err, j.syncs.Load())
	}
	j.syncErr = errors.New("fsync: input/output error")
	if _, wait, err = e.PlaceOrderDeferred("a", req); err != nil {
		t.Fatal(err)
	}
	if err := wait(); !errors.Is(err, ErrJournal) {
		t.Fatalf("wait after a failed sync: %v, want ErrJournal", err)
	}
	// A refused placement writes nothing to wait for.
	j.syncErr = nil
	j.syncs.Store(0)
	bad := req
	bad.Price = decimal.RequireFromString("0.05")
	if _, wait, err = e.PlaceOrderDeferred("a", bad); !errors.Is(err, ErrInvalidOrder) {
		t.Fatalf("refused placement: %v", err)
	}
	if err := wait(); err != nil || j.syncs.Load() != 0 {
		t.Fatalf("refused placement's wait: %v, %d syncs", err, j.syncs.Load())
	}
}

// TestFileJournalAfterACrashInAllocatedSpace: the journal's file is
// allocated ahead of its records (appendlog.OpenPreallocated), so a crash
// leaves zeros after them, and maybe part of a record that was never
// synced, torn or with a hole in it. Reopening replays the records before
// the first zero, cuts the rest, and goes on writing after them.
func TestFileJournalAfterACrashInAllocatedSpace(t *testing.T) {
	clock := testenv.NewClock(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "paper.journal")
	place := func(e *Engine, cid string) {
		t.Helper()
		if _, err := e.PlaceOrder("alice", OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit,
			Size: decimal.RequireFromString("0.001"), Price: decimal.RequireFromString("50000"), ClientOrderID: cid}); err != nil {
			t.Fatal(err)
		}
	}
	j, e := openFileEngine(t, path, Config{Seed: 3, Now: clock.Now})
	if _, err := e.EnsureAccount("alice", decimal.RequireFromString("100000")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		place(e, fmt.Sprintf("c%d", i))
	}
	crashed, err := os.ReadFile(path) // while open: as a crash leaves it
	if err != nil {
		t.Fatal(err)
	}
	_ = j.Close()
	synced := appendlog.Records(crashed)
	zeros := func(n int) []byte { return make([]byte, n) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	cases := map[string][]byte{
		"zeros after the records":         crashed,
		"a torn record, then zeros":       cat(synced, []byte(`{"op":"place","acc`), zeros(300)),
		"a record with a hole in it":      cat(synced, zeros(40), []byte(`"BTC-USD-PERP"}`+"\n"), zeros(300)),
		"the records alone (a clean end)": synced,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "paper.journal")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			reopen := func() (*FileJournal, *Engine) { return openFileEngine(t, path, Config{Seed: 3, Now: clock.Now}) }
			j, e := reopen()
			place(e, "after")
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			j, e = reopen()
			defer j.Close()
			open, err := e.OpenOrders("alice", "")
			if err != nil {
				t.Fatal(err)
			}
			var cids []string
			for _, o := range open {
				cids = append(cids, o.ClientOrderID)
			}
			if fmt.Sprint(cids) != "[c0 c1 c2 after]" {
				t.Fatalf("open orders after two reopenings: %v, want [c0 c1 c2 after]", cids)
			}
		})
	}
}

// openFileEngine opens the file journal at path and the engine its
// records make.
func openFileEngine(t *testing.T, path string, cfg Config) (*FileJournal, *Engine) {
	t.Helper()
	j, records, err := OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Reopen(cfg, j, records)
	if err != nil {
		t.Fatal(err)
	}
	return j, e
}
