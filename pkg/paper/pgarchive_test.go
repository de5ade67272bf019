package paper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// TestPostgresArchivedOrderLookups: on the Postgres journal an order
// closed 2,500 orders ago, which the account no longer holds in memory,
// is still found by client order id and by id from the table orders,
// before and after a restart (with snapshots taken meanwhile), and
// cancelling it says it is closed; it is kept 24 hours after it closed
// and gone once orders closed 49 hours later are archived and a snapshot
// is taken. A look-up the table cannot answer fails with ErrJournal, not
// ErrOrderNotFound.
func TestPostgresArchivedOrderLookups(t *testing.T) {
	pool, dsn, schema := testSchema(t)
	// The test is about look-ups, not durability: commits need not wait
	// for the disk.
	if strings.Contains(dsn, "://") {
		dsn += "&synchronous_commit=off"
	} else {
		dsn += " synchronous_commit=off"
	}
	ctx := context.Background()
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	cfg := Config{Seed: 3, Now: clock.Now}
	open := func(every int) (*PostgresJournal, *Engine) {
		t.Helper()
		j, records, err := OpenPostgresJournal(ctx, dsn, schema, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(j.Close)
		j.mu.Lock()
		j.every = every
		j.mu.Unlock()
		e, err := Reopen(cfg, j, records)
		if err != nil {
			t.Fatal(err)
		}
		return j, e
	}
	const acct = "bot"
	size := decimal.RequireFromString("0.001")
	// place places n market orders, bot-from first and the others from
	// eight goroutines, so that they share commits.
	place := func(e *Engine, from, n int) Order {
		t.Helper()
		one := func(i int) (Order, error) {
			side := []Side{Buy, Sell}[i%2]
			return e.PlaceOrder(acct, OrderRequest{Market: "BTC-USD-PERP", Side: side, Type: Market, Size: size, ClientOrderID: fmt.Sprintf("bot-%d", i)})
		}
		first, err := one(from)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := from + 1 + w; i < from+n; i += 8 {
					if _, err := one(i); err != nil {
						t.Errorf("order %d: %v", i, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		return first
	}
	rows := func(where string) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".orders WHERE "+where).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	j, e := open(300)
	const n = keepClosedArchived + 500
	first := place(e, 0, n)
	check := func(e *Engine, when string) {
		t.Helper()
		got, err := e.OrderByClientID(acct, "bot-0")
		if err != nil || got.ID != first.ID || got.Status != Filled || !got.FilledSize.Equal(size) {
			t.Fatalf("%s: order by client id bot-0 = %+v, %v; want order %s FILLED", when, got, err, first.ID)
		}
		if got, err := e.Order(acct, first.ID); err != nil || got.ClientOrderID != "bot-0" {
			t.Fatalf("%s: order %s = %+v, %v", when, first.ID, got, err)
		}
		if _, err := e.CancelOrder(acct, first.ID); !errors.Is(err, ErrOrderClosed) {
			t.Fatalf("%s: cancel of the archived order: %v, want ErrOrderClosed", when, err)
		}
		if _, err := e.OrderByClientID(acct, "bot-none"); !errors.Is(err, ErrOrderNotFound) {
			t.Fatalf("%s: unknown client id: %v", when, err)
		}
		if _, err := e.OrderByClientID("other", "bot-0"); !errors.Is(err, ErrOrderNotFound) {
			t.Fatalf("%s: another account's client id: %v", when, err)
		}
		if a := e.accounts[acct]; len(a.orders) > keepClosedArchived {
			t.Fatalf("%s: the account holds %d orders in memory, want at most %d", when, len(a.orders), keepClosedArchived)
		}
	}
	check(e, "running")
	if got := rows("client = 'bot-0'"); got != 1 {
		t.Fatalf("bot-0 is in the table %d times, want once", got)
	}
	j.snapshotting.Wait()
	j.Close()
	if _, err := e.OrderByClientID(acct, "bot-0"); !errors.Is(err, ErrJournal) || errors.Is(err, ErrOrderNotFound) {
		t.Fatalf("look-up with the table out of reach: %v, want ErrJournal", err)
	}

	j2, again := open(300)
	// snapshot makes the next change take a snapshot, and waits for it.
	snapshot := func() {
		t.Helper()
		j2.snapshotting.Wait() // a snapshot under way would refuse another
		j2.mu.Lock()
		j2.since = j2.every
		j2.mu.Unlock()
		if _, err := again.SetLeverage(acct, "ETH-USD-PERP", 5); err != nil {
			t.Fatal(err)
		}
		j2.snapshotting.Wait()
	}
	check(again, "after restart")
	if got, want := stateJSON(t, again), stateJSON(t, e); got != want {
		t.Fatal("the reopened engine's state differs from the one that stopped")
	}

	// The orders placed now push out those the account held, and then
	// some of their own, so the newest archived closed now.
	clock.Advance(25 * time.Hour)
	place(again, n, keepClosedArchived+200)
	snapshot()
	check(again, "25 hours later")

	clock.Advance(24 * time.Hour)
	place(again, n+keepClosedArchived+200, keepClosedArchived+200)
	snapshot()
	if _, err := again.OrderByClientID(acct, "bot-0"); !errors.Is(err, ErrOrderNotFound) {
		t.Fatalf("49 hours after it closed, bot-0: %v, want ErrOrderNotFound", err)
	}
	if got := rows("closed < '2026-11-25T12:00:00Z'"); got != 0 {
		t.Fatalf("%d orders closed on the first day are still in the table, 49 hours later", got)
	}
	if got := rows("true"); got < 100 {
		t.Fatalf("%d orders in the table, want the recent ones", got)
	}
}
