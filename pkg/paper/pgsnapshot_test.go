package paper

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
)

// TestPostgresJournalSnapshots: the Postgres journal keeps snapshots, so
// its table holds only the records since the last one, and a reopened
// engine restores the snapshot and replays those to the same orders and
// balance (issue 30).
func TestPostgresJournalSnapshots(t *testing.T) {
	pool, dsn, schema := testSchema(t)
	j, e := openTestJournal(t, dsn, schema)
	j.mu.Lock()
	j.every = 100
	j.mu.Unlock()
	if _, err := e.EnsureAccount("acct", decimal.RequireFromString("100000")); err != nil {
		t.Fatal(err)
	}
	for i := range 450 {
		o, err := e.PlaceOrder("acct", restingBuy(fmt.Sprintf("s-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := e.CancelOrder("acct", o.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := openOrderIDs(t, e)
	wantBalance, _ := e.Balance("acct")
	j.snapshotting.Wait()
	ctx := context.Background()
	var rows, snaps int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".journal").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".snapshot").Scan(&snaps); err != nil {
		t.Fatal(err)
	}
	if snaps != 1 || rows > 101 {
		t.Fatalf("after 600 records with snapshots every 100: %d snapshots and %d journal rows; want 1 and at most 101", snaps, rows)
	}
	j.Close()

	j2, again := openTestJournal(t, dsn, schema)
	if got := openOrderIDs(t, again); !slices.Equal(got, want) {
		t.Fatalf("after reopening %d open orders, before %d", len(got), len(want))
	}
	if b, _ := again.Balance("acct"); !b.Wallet.Equal(wantBalance.Wallet) || !b.Equity.Equal(wantBalance.Equity) {
		t.Fatalf("balance after reopening %+v, before %+v", b, wantBalance)
	}
	// The reopened engine goes on: new ids follow the old ones.
	o, err := again.PlaceOrder("acct", restingBuy("after"))
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(want, func(id string) bool { return strings.HasPrefix(id, o.ID+"/") }) {
		t.Fatalf("order id %s placed after reopening was used before", o.ID)
	}
	j2.Close()
}

// TestPostgresJournalRestartTime: a paper-venue on Postgres with 50,000
// resting orders is ready again within 3 s (DESIGN §13 / issue 30).
func TestPostgresJournalRestartTime(t *testing.T) {
	if testing.Short() {
		t.Skip("places 50,000 orders")
	}
	_, dsn, schema := testSchema(t)
	j, e := openTestJournal(t, dsn, schema)
	if _, err := e.EnsureAccount("acct", decimal.RequireFromString("1000000000")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SetLeverage("acct", "ETH-USD-PERP", 50); err != nil {
		t.Fatal(err)
	}
	const workers, each = 50, 1010 // a snapshot at 50,000 records, then some after it
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := e.PlaceOrder("acct", restingBuy(fmt.Sprintf("r-%d-%d", w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	j.snapshotting.Wait()
	j.Close()

	start := time.Now()
	j2, records, err := OpenPostgresJournal(context.Background(), dsn, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	again, err := Reopen(Config{Seed: 3}, j2, records)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	os, err := again.OpenOrders("acct", "")
	if err != nil || len(os) != workers*each {
		t.Fatalf("%d open orders after reopening (%v); want %d", len(os), err, workers*each)
	}
	t.Logf("restart with %d resting orders: %s, %d records replayed after the snapshot", len(os), took, len(records))
	if len(records) > 5000 {
		t.Fatalf("%d records replayed: the snapshot was not used", len(records))
	}
	if took > 3*time.Second && !raceEnabled {
		t.Fatalf("the restart took %s", took)
	}
}
