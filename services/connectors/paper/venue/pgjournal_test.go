package venue

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// TestPostgresJournal: a paper engine journaled to Postgres comes back
// from it with the same orders, positions and id sequence.
func TestPostgresJournal(t *testing.T) {
	pool, dsn := testenv.Postgres(t)
	var schema string
	if err := pool.QueryRow(context.Background(), "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	j, records, err := OpenPostgresJournal(ctx, dsn, schema)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 0 {
		t.Fatalf("a new journal holds %d records", len(records))
	}
	e, err := paper.Reopen(paper.Config{Seed: 3, Now: clock.Now}, j, records)
	if err != nil {
		t.Fatal(err)
	}
	d := decimal.RequireFromString
	if _, err := e.EnsureAccount("acct", d("2500")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if _, err := e.PlaceOrder("acct", paper.OrderRequest{Market: "ETH-USD-PERP", Side: paper.Buy, Type: paper.Market, Size: d("0.1")}); err != nil {
		t.Fatal(err)
	}
	o, err := e.PlaceOrder("acct", paper.OrderRequest{Market: "ETH-USD-PERP", Side: paper.Buy, Type: paper.Limit, Size: d("0.1"), Price: d("2000"), ClientOrderID: "pg-1"})
	if err != nil {
		t.Fatal(err)
	}
	j.Close()

	j2, records, err := OpenPostgresJournal(ctx, dsn, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	again, err := paper.Reopen(paper.Config{Seed: 3, Now: clock.Now}, j2, records)
	if err != nil {
		t.Fatal(err)
	}
	got, err := again.OrderByClientID("acct", "pg-1")
	if err != nil || got.ID != o.ID || got.Status != paper.Open {
		t.Fatalf("order after reopening: %+v %v", got, err)
	}
	ps, _ := again.Positions("acct", "")
	b, _ := again.Balance("acct")
	if len(ps) != 1 || !ps[0].Size.Equal(d("0.1")) || !b.Wallet.LessThan(d("2500")) || !b.Wallet.GreaterThan(d("2499")) {
		t.Fatalf("positions %+v, wallet %s", ps, b.Wallet)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".journal").Scan(&n); err != nil || n != len(records) {
		t.Fatalf("journal rows %d (%v), records %d", n, err, len(records))
	}
}
