package paper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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
	j, records, err := OpenPostgresJournal(ctx, dsn, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 0 {
		t.Fatalf("a new journal holds %d records", len(records))
	}
	e, err := Reopen(Config{Seed: 3, Now: clock.Now}, j, records)
	if err != nil {
		t.Fatal(err)
	}
	d := decimal.RequireFromString
	if _, err := e.EnsureAccount("acct", d("2500")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if _, err := e.PlaceOrder("acct", OrderRequest{Market: "ETH-USD-PERP", Side: Buy, Type: Market, Size: d("0.1")}); err != nil {
		t.Fatal(err)
	}
	o, err := e.PlaceOrder("acct", OrderRequest{Market: "ETH-USD-PERP", Side: Buy, Type: Limit, Size: d("0.1"), Price: d("2000"), ClientOrderID: "pg-1"})
	if err != nil {
		t.Fatal(err)
	}
	j.Close()

	j2, records, err := OpenPostgresJournal(ctx, dsn, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	again, err := Reopen(Config{Seed: 3, Now: clock.Now}, j2, records)
	if err != nil {
		t.Fatal(err)
	}
	got, err := again.OrderByClientID("acct", "pg-1")
	if err != nil || got.ID != o.ID || got.Status != Open {
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

// openTestJournal opens a Postgres journal in the test's schema and the
// engine it records, and closes both at the end.
func openTestJournal(t *testing.T, dsn, schema string) (*PostgresJournal, *Engine) {
	t.Helper()
	j, records, err := OpenPostgresJournal(context.Background(), dsn, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Close)
	e, err := Reopen(Config{Seed: 3}, j, records)
	if err != nil {
		t.Fatal(err)
	}
	return j, e
}

func testSchema(t *testing.T) (pool *pgxpool.Pool, dsn, schema string) {
	t.Helper()
	pool, dsn = testenv.Postgres(t)
	if err := pool.QueryRow(context.Background(), "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	return pool, dsn, schema
}

func restingBuy(clientID string) OrderRequest {
	return OrderRequest{Market: "ETH-USD-PERP", Side: Buy, Type: Limit,
		Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("1000"), ClientOrderID: clientID}
}

// openOrderIDs lists the account's open orders as "id/clientOrderId".
func openOrderIDs(t *testing.T, e *Engine) []string {
	t.Helper()
	os, err := e.OpenOrders("acct", "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range os {
		ids = append(ids, o.ID+"/"+o.ClientOrderID)
	}
	slices.Sort(ids)
	return ids
}

// TestPostgresJournalConcurrentCommits: placements made at the same time
// share commits, and every one of them is in the table once.
func TestPostgresJournalConcurrentCommits(t *testing.T) {
	pool, dsn, schema := testSchema(t)
	j, e := openTestJournal(t, dsn, schema)
	var commits atomic.Int64
	store := j.store
	j.store = func(ctx context.Context, batch []queued) error {
		commits.Add(1)
		return store(ctx, batch)
	}
	if _, err := e.EnsureAccount("acct", decimal.RequireFromString("100000")); err != nil {
		t.Fatal(err)
	}
	const workers, each = 16, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := e.PlaceOrder("acct", restingBuy(fmt.Sprintf("c-%d-%d", w, i))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var rows int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".journal").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if want := 2 + workers*each; rows != want { // start, account, placements
		t.Errorf("journal rows %d, want %d", rows, want)
	}
	if n := commits.Load(); n >= workers*each+1 {
		t.Errorf("%d commits for %d records: concurrent placements did not share any", n, workers*each+1)
	}
	t.Logf("%d placements in %d commits", workers*each, commits.Load())
	want := openOrderIDs(t, e)
	j.Close()
	_, again := openTestJournal(t, dsn, schema)
	if got := openOrderIDs(t, again); !slices.Equal(got, want) || len(got) != workers*each {
		t.Fatalf("after reopening %d open orders, before %d", len(got), len(want))
	}
}

// TestPostgresJournalLostAnswer: a commit Postgres made whose answer was
// lost is retried without storing the records twice, and the placement
// succeeds; after a restart the order is there once.
func TestPostgresJournalLostAnswer(t *testing.T) {
	pool, dsn, schema := testSchema(t)
	j, e := openTestJournal(t, dsn, schema)
	if _, err := e.EnsureAccount("acct", decimal.RequireFromString("10000")); err != nil {
		t.Fatal(err)
	}
	store := j.store
	var calls atomic.Int64
	j.store = func(ctx context.Context, batch []queued) error {
		err := store(ctx, batch)
		if calls.Add(1) == 1 && err == nil {
			return errors.New("connection reset after the commit")
		}
		return err
	}
	o, err := e.PlaceOrder("acct", restingBuy("lost-1"))
	if err != nil {
		t.Fatalf("placement after a lost commit answer: %v", err)
	}
	if calls.Load() != 2 {
		t.Fatalf("%d commit attempts, want the lost one and its retry", calls.Load())
	}
	var rows int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".journal").Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("journal rows %d (%v), want 3: start, account, placement", rows, err)
	}
	j.Close()
	_, again := openTestJournal(t, dsn, schema)
	if got := openOrderIDs(t, again); !slices.Equal(got, []string{o.ID + "/lost-1"}) {
		t.Fatalf("open orders after reopening: %v", got)
	}
}

// TestPostgresJournalOutage: when Postgres cannot commit, the placement
// fails with ErrJournal and the journal refuses later changes (which then
// are not made) until a retry has committed what it held; it then takes
// changes again, and a restart shows exactly what the engine held.
func TestPostgresJournalOutage(t *testing.T) {
	_, dsn, schema := testSchema(t)
	j, e := openTestJournal(t, dsn, schema)
	j.patience, j.retryEvery = 50*time.Millisecond, 20*time.Millisecond
	var down atomic.Bool
	store := j.store
	j.store = func(ctx context.Context, batch []queued) error {
		if down.Load() {
			return errors.New("dial tcp 127.0.0.1:5432: connection refused")
		}
		return store(ctx, batch)
	}
	outage(t, j, e, func() { down.Store(true) }, func() { down.Store(false) })
	j.Close()
	reopened(t, dsn, schema, e)
}

// outage runs an engine through a journal outage that fail starts and
// heal ends, as TestPostgresJournalOutage says.
func outage(t *testing.T, j *PostgresJournal, e *Engine, fail, heal func()) {
	t.Helper()
	if _, err := e.EnsureAccount("acct", decimal.RequireFromString("10000")); err != nil {
		t.Fatal(err)
	}
	fail()
	if _, err := e.PlaceOrder("acct", restingBuy("during-1")); !errors.Is(err, ErrJournal) {
		t.Fatalf("placement while Postgres cannot commit: %v, want ErrJournal", err)
	}
	held := openOrderIDs(t, e) // the failed placement is in memory, its record queued
	if _, err := e.PlaceOrder("acct", restingBuy("during-2")); !errors.Is(err, ErrJournal) {
		t.Fatalf("second placement while the journal is failed: %v, want ErrJournal", err)
	}
	if got := openOrderIDs(t, e); !slices.Equal(got, held) {
		t.Fatalf("a refused placement changed the engine: %v, before %v", got, held)
	}
	if err := j.Ping(context.Background()); err == nil {
		t.Fatal("Ping is nil while the journal refuses changes")
	}
	heal()
	deadline := time.Now().Add(10 * time.Second)
	for j.Ping(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the journal did not recover within 10 s of Postgres committing again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := e.PlaceOrder("acct", restingBuy("after-1")); err != nil {
		t.Fatalf("placement after recovery: %v", err)
	}
	if got := openOrderIDs(t, e); len(got) != 2 {
		t.Fatalf("open orders %v, want during-1 and after-1", got)
	}
}

// reopened checks that the journal in schema brings back e's open orders.
func reopened(t *testing.T, dsn, schema string, e *Engine) {
	t.Helper()
	want := openOrderIDs(t, e)
	_, again := openTestJournal(t, dsn, schema)
	if got := openOrderIDs(t, again); !slices.Equal(got, want) {
		t.Fatalf("after reopening %v, the engine held %v", got, want)
	}
}

// TestPostgresJournalSecondWriter: two journals on one schema (two venues
// by mistake) cannot both write a position: the second fails for good
// instead of losing its record.
func TestPostgresJournalSecondWriter(t *testing.T) {
	_, dsn, schema := testSchema(t)
	a, ea := openTestJournal(t, dsn, schema)
	b, eb := openTestJournal(t, dsn, schema)
	b.patience = 50 * time.Millisecond
	if _, err := ea.EnsureAccount("acct", decimal.RequireFromString("100")); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.EnsureAccount("other", decimal.RequireFromString("200")); !errors.Is(err, ErrJournal) {
		t.Fatalf("second writer: %v, want ErrJournal", err)
	}
	if err := b.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "second paper-venue") {
		t.Fatalf("second writer's Ping: %v", err)
	}
	if err := a.Ping(context.Background()); err != nil {
		t.Fatalf("first writer's Ping: %v", err)
	}
}

// TestPostgresJournalFromSerialTable: a journal table of an earlier
// version (seq bigserial, with a gap where an insert failed) is read in
// order and written on after its highest position.
func TestPostgresJournalFromSerialTable(t *testing.T) {
	pool, dsn, schema := testSchema(t)
	ctx := context.Background()
	table := pgx.Identifier{schema}.Sanitize() + ".journal"
	if _, err := pool.Exec(ctx, "CREATE TABLE "+table+" (seq bigserial PRIMARY KEY, record jsonb NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	// The records of a fresh engine, as the earlier version wrote them.
	mem := &memJournal{}
	first, err := Reopen(Config{Seed: 3}, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.EnsureAccount("acct", decimal.RequireFromString("10000")); err != nil {
		t.Fatal(err)
	}
	for i, r := range mem.records {
		seq := int64(i + 1)
		if i > 0 {
			seq = int64(i + 2) // a failed insert took a sequence value
		}
		if _, err := pool.Exec(ctx, "INSERT INTO "+table+" (seq, record) VALUES ($1, $2::text::jsonb)", seq, string(r)); err != nil {
			t.Fatal(err)
		}
	}
	j2, e2 := openTestJournal(t, dsn, schema)
	if j2.last != 3 {
		t.Fatalf("positions go on after %d, want 3", j2.last)
	}
	if _, err := e2.PlaceOrder("acct", restingBuy("upgraded")); err != nil {
		t.Fatal(err)
	}
	var maxSeq int64
	if err := pool.QueryRow(ctx, "SELECT max(seq) FROM "+table).Scan(&maxSeq); err != nil || maxSeq != 4 {
		t.Fatalf("highest position %d (%v), want 4", maxSeq, err)
	}
}

// TestPostgresJournalConnectionLoss: the same over a real broken network
// path: the journal reaches Postgres through a proxy that drops every
// connection and refuses new ones, then listens again.
func TestPostgresJournalConnectionLoss(t *testing.T) {
	_, dsn, schema := testSchema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, u.Host)
	u.Host = p.addr
	j, e := openTestJournal(t, u.String(), schema)
	j.patience, j.retryEvery = 300*time.Millisecond, 50*time.Millisecond
	outage(t, j, e, p.cut, func() { p.restore(t) })
	j.Close()
	reopened(t, dsn, schema, e)
}

// proxy forwards TCP connections to a target until cut, which closes the
// listener and every connection; restore listens on the same address again.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), target: target}
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}
