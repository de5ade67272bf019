package paper

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// TestArchivedOrderLookups: an order closed 20,000 orders ago is still
// found by client order id and by id, before and after a restart (with
// snapshots taken meanwhile), cancelling it says it is closed, and
// getFills answers its largest page after more than 10,000 fills.
func TestArchivedOrderLookups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "paper.journal")
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	cfg := Config{Seed: 3, Now: clock.Now}
	j, records, err := OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	j.every = 7000
	j.orderArchive.segMax = 3000 // bot-0 ends in a sealed segment
	e, err := Reopen(cfg, j, records)
	if err != nil {
		t.Fatal(err)
	}
	const n, acct = 20_500, "bot"
	size := decimal.RequireFromString("0.001")
	var first Order
	for i := range n {
		side := []Side{Buy, Sell}[i%2]
		o, err := e.PlaceOrder(acct, OrderRequest{Market: "BTC-USD-PERP", Side: side, Type: Market, Size: size, ClientOrderID: fmt.Sprintf("bot-%d", i)})
		if err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
		if i == 0 {
			first = o
		}
	}
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
		fills, err := e.Fills(acct, "", 1000)
		if err != nil || len(fills) != 1000 || fills[0].ClientOrderID != fmt.Sprintf("bot-%d", n-1) {
			t.Fatalf("%s: fills at limit 1000: %d, %v", when, len(fills), err)
		}
	}
	check(e, "running")
	if len(j.sealed) < 5 {
		t.Fatalf("%d sealed segments, want at least 5", len(j.sealed))
	}
	j.Close()

	j2, records, err := OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	again, err := Reopen(cfg, j2, records)
	if err != nil {
		t.Fatal(err)
	}
	check(again, "after restart")
	if got, want := stateJSON(t, again), stateJSON(t, e); got != want {
		t.Fatal("the reopened engine's state differs from the one that stopped")
	}
	if a := again.accounts[acct]; len(a.orders) > keepClosedArchived {
		t.Fatalf("the account holds %d orders in memory, want at most %d", len(a.orders), keepClosedArchived)
	}
}

// TestArchiveMemoryPerOrder: the archive's heap hardly grows with the
// orders it holds: only the newest segment is indexed in memory.
func TestArchiveMemoryPerOrder(t *testing.T) {
	a, err := openArchive(filepath.Join(t.TempDir(), "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	const n = 4 * segmentOrders
	o := Order{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: decimal.RequireFromString("0.001"),
		Price: decimal.RequireFromString("50000"), Status: Cancelled, UpdatedAt: time.Now()}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n + 1 { // the last starts the fifth segment
		o.ID, o.ClientOrderID = fmt.Sprint(100000000+i), fmt.Sprintf("bench-5f0c1d2e3a4b-%d", i)
		if err := a.archive("cred-0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11", o, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	t.Logf("%.1f bytes of heap per archived order in %d sealed segments", per, len(a.sealed))
	if len(a.sealed) != 4 || per > 8 {
		t.Fatalf("%d sealed segments, %.1f bytes of heap per archived order; want 4 and at most 8", len(a.sealed), per)
	}
	runtime.KeepAlive(a)
}

// TestArchiveSealedLookups: look-ups find orders in sealed segments (the
// newest order of a client order id used again, across segments), a
// replay does not archive an order twice, and all of it holds after
// reopening, also when a sorted index file is lost.
func TestArchiveSealedLookups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orders")
	a, err := openArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	a.segMax = 10
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	const n = 100
	put := func(a *orderArchive, i int) {
		t.Helper()
		o := Order{ID: fmt.Sprint(100000000 + i), ClientOrderID: fmt.Sprintf("c-%d", i%30), Status: Cancelled, UpdatedAt: t0.Add(time.Duration(i) * time.Second)}
		if err := a.archive("bot", o, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		put(a, i)
	}
	check := func(a *orderArchive, when string) {
		t.Helper()
		for i := range n {
			if o, ok, _ := a.archivedByID("bot", fmt.Sprint(100000000+i)); !ok || o.ClientOrderID != fmt.Sprintf("c-%d", i%30) {
				t.Fatalf("%s: order %d by id: %+v, %v", when, i, o, ok)
			}
			if _, ok, _ := a.archivedByID("other", fmt.Sprint(100000000+i)); ok {
				t.Fatalf("%s: order %d found for another account", when, i)
			}
		}
		for c := range 30 {
			newest := 90 + c
			if c >= 10 {
				newest = 60 + c
			}
			if o, ok, _ := a.archivedByClient("bot", fmt.Sprintf("c-%d", c)); !ok || o.ID != fmt.Sprint(100000000+newest) {
				t.Fatalf("%s: client id c-%d: %+v, %v; want order %d", when, c, o, ok, newest)
			}
		}
		if _, ok, _ := a.archivedByClient("bot", "c-none"); ok {
			t.Fatalf("%s: an unknown client id was found", when)
		}
		if got := a.indexed(); got != n {
			t.Fatalf("%s: %d orders archived, want %d", when, got, n)
		}
	}
	check(a, "running")
	if len(a.sealed) != 9 {
		t.Fatalf("%d sealed segments, want 9", len(a.sealed))
	}
	put(a, 5) // a replay archives an order again
	check(a, "after a replay")
	a.close()

	if err := os.Remove(a.segPath(3) + ".run"); err != nil {
		t.Fatal(err)
	}
	b, err := openArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	check(b, "reopened")
	put(b, 7)
	check(b, "reopened, after a replay")
}

// TestHistoryPerMarketAcrossRestart: a fill on a quiet market stays in
// getFills filtered by that market after thousands of fills elsewhere,
// and fills and funding payments answer alike after a restart from a
// snapshot.
func TestHistoryPerMarketAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "paper.journal")
	clock := testenv.NewClock(time.Date(2026, 11, 24, 7, 59, 0, 0, time.UTC))
	cfg := Config{Seed: 3, Now: clock.Now}
	j, records, err := OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	j.every = 500
	e, err := Reopen(cfg, j, records)
	if err != nil {
		t.Fatal(err)
	}
	const acct = "bot"
	if _, err := e.PlaceOrder(acct, OrderRequest{Market: "ETH-USD-PERP", Side: Buy, Type: Market, Size: decimal.RequireFromString("0.1")}); err != nil {
		t.Fatal(err)
	}
	for i := range 2*historyPage + 500 {
		if i == 10 {
			clock.Advance(2 * time.Minute) // the 08:00 funding of the ETH position
		}
		side := []Side{Buy, Sell}[i%2]
		if _, err := e.PlaceOrder(acct, OrderRequest{Market: "BTC-USD-PERP", Side: side, Type: Market, Size: decimal.RequireFromString("0.001")}); err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
	}
	check := func(e *Engine, when string) {
		t.Helper()
		eth, err := e.Fills(acct, "ETH-USD-PERP", historyPage)
		if err != nil || len(eth) != 1 {
			t.Fatalf("%s: ETH fills after %d BTC fills: %d, %v", when, 2*historyPage+500, len(eth), err)
		}
		all, err := e.Fills(acct, "", historyPage)
		if err != nil || len(all) != historyPage || !fillNewer(all[0], all[1]) || all[0].Market != "BTC-USD-PERP" {
			t.Fatalf("%s: fills at limit %d: %d, %v", when, historyPage, len(all), err)
		}
		pays, err := e.FundingPayments(acct, "ETH-USD-PERP", time.Time{}, historyPage)
		if err != nil || len(pays) != 1 || pays[0].Market != "ETH-USD-PERP" {
			t.Fatalf("%s: funding payments: %+v, %v", when, pays, err)
		}
	}
	check(e, "running")
	j.Close()
	if j.snapID == 0 {
		t.Fatal("no snapshot was taken")
	}
	j2, records, err := OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	again, err := Reopen(cfg, j2, records)
	if err != nil {
		t.Fatal(err)
	}
	check(again, "after restart")
}

// TestArchiveSpans: an archived order is found for at least a span after
// it closed and forgotten once its segment's last order closed a span
// ago (segments seal after an hour), also after reopening, so neither
// the files nor the index grow with history. The files of the archive
// before segments are taken over.
func TestArchiveSpans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orders")
	a, err := openArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	put := func(a *orderArchive, i int, at time.Duration) {
		t.Helper()
		o := Order{ID: fmt.Sprint(100000000 + i), ClientOrderID: fmt.Sprintf("c-%d", i), Status: Cancelled, UpdatedAt: t0.Add(at)}
		if err := a.archive("bot", o, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	found := func(a *orderArchive, i int) bool {
		_, byClient, _ := a.archivedByClient("bot", fmt.Sprintf("c-%d", i))
		_, byID, _ := a.archivedByID("bot", fmt.Sprint(100000000+i))
		if byClient != byID {
			t.Fatalf("order %d: found by client id %v, by id %v", i, byClient, byID)
		}
		return byClient
	}
	put(a, 0, 0)
	put(a, 1, 30*time.Minute)
	put(a, 2, 23*time.Hour)                // seals 0 and 1
	put(a, 3, 24*time.Hour+15*time.Minute) // seals 2
	if !found(a, 0) || !found(a, 1) || !found(a, 2) || !found(a, 3) {
		t.Fatal("an order closed less than a span after its segment's last is forgotten")
	}
	put(a, 4, 24*time.Hour+31*time.Minute) // 0 and 1's segment ended a span ago
	if found(a, 0) || found(a, 1) || !found(a, 2) || !found(a, 3) || !found(a, 4) {
		t.Fatalf("after a span: found 0 %v, 1 %v, 2 %v, 3 %v, 4 %v", found(a, 0), found(a, 1), found(a, 2), found(a, 3), found(a, 4))
	}
	if _, err := os.Stat(a.segPath(1)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the expired segment's file: %v", err)
	}
	a.close()
	b, err := openArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	if found(b, 0) || !found(b, 2) || !found(b, 3) || !found(b, 4) || b.indexed() != 3 {
		t.Fatalf("after reopening: %d orders indexed, found 2 %v, 3 %v, 4 %v", b.indexed(), found(b, 2), found(b, 3), found(b, 4))
	}
	put(b, 5, 47*time.Hour+time.Minute) // 2's segment ended a span ago
	if found(b, 2) || !found(b, 3) || !found(b, 4) || !found(b, 5) {
		t.Fatal("the reopened archive did not expire a segment after its span")
	}
	b.close()

	// An archive written before segments: path (this span) and path.1.
	old := filepath.Join(t.TempDir(), "orders")
	for i, p := range []string{old + ".1", old} {
		o := Order{ID: fmt.Sprint(100000000 + i), ClientOrderID: fmt.Sprintf("c-%d", i), Status: Cancelled, UpdatedAt: t0}
		line, _ := json.Marshal(archiveLine{Account: "bot", Seq: uint64(i), Order: o})
		if err := os.WriteFile(p, append(line, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := openArchive(old)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if !found(c, 0) || !found(c, 1) || len(c.sealed) != 1 {
		t.Fatalf("the archive before segments: found 0 %v, 1 %v, %d sealed", found(c, 0), found(c, 1), len(c.sealed))
	}
}

// TestArchiveOpenTime: reopening an archive of 100,000 orders (a few
// hours of a busy bot) indexes them well within a restart's budget.
func TestArchiveOpenTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orders")
	a, err := openArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	o := Order{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: decimal.RequireFromString("0.001"),
		Price: decimal.RequireFromString("50000"), Status: Cancelled, UpdatedAt: time.Now()}
	for i := range n {
		o.ID, o.ClientOrderID = fmt.Sprint(100000000+i), fmt.Sprintf("bench-5f0c1d2e3a4b-%d", i)
		if err := a.archive("cred-0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11", o, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	a.close()
	t0 := time.Now()
	b, err := openArchive(path)
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	t.Logf("opened %d archived orders in %v", b.indexed(), took)
	if b.indexed() != n || took > 500*time.Millisecond {
		t.Fatalf("opened %d of %d archived orders in %v; want all within 0.5s", b.indexed(), n, took)
	}
	b.close()

	// A crash after the last lines were written but before their key
	// entries (and amid a line): opening indexes them from the lines.
	last := b.segPath(b.cur.num)
	if err := os.Truncate(last+".idx", int64(b.cur.count-10)*idxEntry-7); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(last, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"a":"torn`)
	fh.Close()
	c, err := openArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if _, ok, _ := c.archivedByClient("cred-0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11", fmt.Sprintf("bench-5f0c1d2e3a4b-%d", n-1)); !ok || c.indexed() != n {
		t.Fatalf("after a torn key file: %d orders indexed, the last found %v", c.indexed(), ok)
	}
	if st, _ := os.Stat(last + ".idx"); st.Size() != int64(c.cur.count)*idxEntry {
		t.Fatalf("key file holds %d bytes, want %d", st.Size(), c.cur.count*idxEntry)
	}
}
