package paper

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// churn runs n random calls on e (placements that rest, cross and fill,
// stops, cancels, leverage, closes) while clock moves.
func churn(t *testing.T, e *Engine, clock *testenv.Clock, rng *rand.Rand, n int) {
	t.Helper()
	for i := range n {
		acct := fmt.Sprintf("acct-%d", rng.IntN(3))
		mk := []string{"BTC-USD-PERP", "ETH-USD-PERP"}[rng.IntN(2)]
		info, err := e.Market(mk)
		if err != nil {
			t.Fatal(err)
		}
		side := []Side{Buy, Sell}[rng.IntN(2)]
		off := decimal.NewFromInt(int64(rng.IntN(41) - 20)).Div(decimal.NewFromInt(10000))
		price := info.MarkPrice.Add(info.MarkPrice.Mul(off)).Div(info.TickSize).Floor().Mul(info.TickSize)
		size := info.LotSize.Mul(decimal.NewFromInt(int64(1 + rng.IntN(20))))
		if mk == "ETH-USD-PERP" {
			size = size.Mul(decimal.NewFromInt(10))
		}
		switch op := rng.IntN(12); {
		case op < 6:
			_, _ = e.PlaceOrder(acct, OrderRequest{Market: mk, Side: side, Type: Limit, Size: size, Price: price, ClientOrderID: fmt.Sprintf("c%d", i)})
		case op < 7:
			_, _ = e.PlaceOrder(acct, OrderRequest{Market: mk, Side: side, Type: Market, Size: size})
		case op < 8:
			_, _ = e.PlaceOrder(acct, OrderRequest{Market: mk, Side: side, Type: StopMarket, Size: size, TriggerPrice: price, ReduceOnly: rng.IntN(2) == 0})
		case op < 10:
			if open, _ := e.OpenOrders(acct, ""); len(open) > 0 {
				_, _ = e.CancelOrder(acct, open[rng.IntN(len(open))].ID)
			}
		case op < 11:
			_, _ = e.SetLeverage(acct, mk, 1+rng.IntN(20))
		default:
			_, _ = e.ClosePosition(acct, mk)
		}
		clock.Advance(time.Duration(rng.IntN(90)) * time.Second)
	}
}

func stateJSON(t *testing.T, e *Engine) string {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := json.Marshal(e.state())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSnapshotRestart: an engine on a file journal that took snapshots
// along the way reopens to exactly the state of one that never stopped,
// and both go on alike (walk, fills, ids).
func TestSnapshotRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "paper.journal")
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	cfg := Config{Seed: 3, Now: clock.Now}
	j, records, err := OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	j.every = 150
	e, err := Reopen(cfg, j, records)
	if err != nil {
		t.Fatal(err)
	}
	refClock := testenv.NewClock(clock.Now())
	ref := New(Config{Seed: 3, Now: refClock.Now})
	churn(t, e, clock, rand.New(rand.NewPCG(1, 2)), 1000)
	churn(t, ref, refClock, rand.New(rand.NewPCG(1, 2)), 1000)
	if j.snapID < 3 {
		t.Fatalf("%d snapshots taken in 1,000 calls, every 150 records", j.snapID)
	}
	j.Close()

	j2, records, err := OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) > 151 {
		t.Fatalf("the journal holds %d records after snapshots every 150", len(records))
	}
	again, err := Reopen(cfg, j2, records)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if got, want := stateJSON(t, again), stateJSON(t, ref); got != want {
		t.Fatalf("state after reopening differs from the engine that never stopped:\n got %.600s\nwant %.600s", got, want)
	}
	churn(t, again, clock, rand.New(rand.NewPCG(5, 6)), 300)
	churn(t, ref, refClock, rand.New(rand.NewPCG(5, 6)), 300)
	if got, want := stateJSON(t, again), stateJSON(t, ref); got != want {
		t.Fatal("the reopened engine went on differently from the one that never stopped")
	}
}

// TestSnapshotCrashBeforeJournalRestart: a crash after the snapshot was
// written but before the journal started afresh leaves the old journal,
// whose records the snapshot already holds: opening does not apply them
// twice.
func TestSnapshotCrashBeforeJournalRestart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "paper.journal")
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	cfg := Config{Seed: 3, Now: clock.Now}
	j, e := openFileEngine(t, path, cfg)
	churn(t, e, clock, rand.New(rand.NewPCG(1, 2)), 200)
	want := stateJSON(t, e)
	// The snapshot as Compact writes it, without the rotation after it.
	raw, _ := json.Marshal(snapFile{ID: 1, Seed: 3, State: json.RawMessage(want)})
	if err := appendlog.WriteFile(path+".snap", raw); err != nil {
		t.Fatal(err)
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
	if got := stateJSON(t, again); got != want {
		t.Fatalf("state after the crash:\n got %.400s\nwant %.400s", got, want)
	}
}

// TestRestartTime: a restart with 50,000 resting orders, or after as many
// records as the journal takes between snapshots, is ready within 3 s.
func TestRestartTime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds large journals; skipped with -short")
	}
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	cfg := Config{Seed: 3, Now: clock.Now}
	req := OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: decimal.RequireFromString("0.001"), Price: decimal.RequireFromString("10000")}
	open := func(path string) (time.Duration, *Engine) {
		t0 := time.Now()
		j, records, err := OpenFileJournal(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close() })
		e, err := Reopen(cfg, j, records)
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(t0), e
	}

	t.Run("50,000 resting orders", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "paper.journal")
		e := New(cfg)
		if _, err := e.EnsureAccount("a", decimal.NewFromInt(1_000_000_000)); err != nil {
			t.Fatal(err)
		}
		for i := range 50_000 {
			r := req
			r.ClientOrderID = fmt.Sprintf("o%d", i)
			if _, err := e.PlaceOrder("a", r); err != nil {
				t.Fatal(err)
			}
		}
		raw, _ := json.Marshal(e.state())
		j, _, err := OpenFileJournal(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Compact(cfg.Seed, raw); err != nil {
			t.Fatal(err)
		}
		j.Close()
		took, again := open(path)
		if o, err := again.OpenOrders("a", ""); err != nil || len(o) != 50_000 {
			t.Fatalf("%d open orders after the restart (%v)", len(o), err)
		}
		t.Logf("restart with 50,000 resting orders: %s", took)
		if took > 3*time.Second && !raceEnabled {
			t.Fatalf("the restart took %s", took)
		}
	})

	t.Run("a full journal", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "paper.journal")
		mem := &memJournal{}
		e, err := Reopen(cfg, mem, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.EnsureAccount("a", decimal.NewFromInt(1_000_000_000)); err != nil {
			t.Fatal(err)
		}
		// Placements and cancels, half of them resting on: as many records
		// as the journal holds at most between snapshots.
		for i := 0; len(mem.records) < snapshotEvery; i++ {
			r := req
			r.ClientOrderID = fmt.Sprintf("o%d", i)
			o, err := e.PlaceOrder("a", r)
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				if _, err := e.CancelOrder("a", o.ID); err != nil {
					t.Fatal(err)
				}
			}
			if i%100 == 0 {
				clock.Advance(time.Second)
			}
		}
		var data []byte
		for _, r := range mem.records {
			data = append(append(data, r...), '\n')
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		took, _ := open(path)
		t.Logf("restart replaying %d records: %s", len(mem.records), took)
		if took > 3*time.Second && !raceEnabled {
			t.Fatalf("the restart took %s", took)
		}
	})
}

// TestNotesComeBackAndSnapshotsWaitForTheirOwner: the notes recorded
// with successful placements and alone come back from replay, oldest
// first and once; a refused placement's does not. A snapshot, which drops
// the records that hold them, first runs the BeforeCompact hook and is
// not taken when it fails.
func TestNotesComeBackAndSnapshotsWaitForTheirOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "paper.journal")
	j, records, err := OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Reopen(Config{Seed: 1}, j, records)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EnsureAccount("a", decimal.Zero); err != nil {
		t.Fatal(err)
	}
	req := OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: decimal.RequireFromString("0.01"),
		Price: decimal.RequireFromString("30000")}
	_, wait, err := e.PlaceOrderNoted("a", req, []byte(`{"k":"placed"}`))
	if err != nil || wait() != nil {
		t.Fatal(err)
	}
	bad := req
	bad.Price, bad.PostOnly = decimal.RequireFromString("1000000"), true
	if _, _, err := e.PlaceOrderNoted("a", bad, []byte(`{"k":"refused"}`)); err == nil {
		t.Fatal("a crossing post-only order was placed")
	}
	wait, err = e.NoteDeferred([]byte(`{"k":"result"}`))
	if err != nil || wait() != nil {
		t.Fatal(err)
	}
	if _, err := e.NoteDeferred([]byte(`not json`)); err == nil {
		t.Fatal("a note that is not JSON was recorded")
	}
	j.Close()

	j, records, err = OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if e, err = Reopen(Config{Seed: 1}, j, records); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%s", e.Notes()); got != `[{"k":"placed"} {"k":"result"}]` {
		t.Fatalf("notes after replay: %s", got)
	}
	if n := e.Notes(); n != nil {
		t.Fatalf("notes handed back twice: %s", n)
	}

	j.every = 2
	var calls atomic.Int32
	fail := errors.New("fsync: input/output error")
	j.BeforeCompact(func() error {
		if calls.Add(1) == 1 {
			return fail
		}
		return nil
	})
	snap := j.snapID
	if _, err := e.PlaceOrder("a", req); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || j.snapID != snap {
		t.Fatalf("hook ran %d times, snapshot %d -> %d; want one failed hook and no snapshot", calls.Load(), snap, j.snapID)
	}
	if _, err := e.PlaceOrder("a", req); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || j.snapID != snap+1 {
		t.Fatalf("hook ran %d times, snapshot %d -> %d; want a snapshot after the hook", calls.Load(), snap, j.snapID)
	}
}

// TestSnapshotCadenceFollowsTheState: a small state (orders placed and
// cancelled) is snapshotted every snapshotAtLeast records, so a restart
// replays few; a growing one (orders that rest) only once its records
// outweigh the last snapshot twice, so snapshots never cost more than
// half the bytes of the records they replace (issue 30). Placements
// with a note (perpgate serve's) count like any other change: they once
// never took a snapshot, and 50,000 resting orders replayed whole.
func TestSnapshotCadenceFollowsTheState(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 60,000 records; skipped with -short")
	}
	cfg := Config{Seed: 3, Now: testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)).Now}
	req := OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: decimal.RequireFromString("0.001"), Price: decimal.RequireFromString("10000")}
	run := func(cancel, noted bool) (snapshots uint64, written int) {
		j, records, err := OpenFileJournal(filepath.Join(t.TempDir(), "paper.journal"))
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		e, err := Reopen(cfg, j, records)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.EnsureAccount("a", decimal.NewFromInt(1_000_000_000)); err != nil {
			t.Fatal(err)
		}
		for i := 0; written < 20_000; i++ {
			r := req
			r.ClientOrderID = fmt.Sprintf("o%d", i)
			var o Order
			if noted {
				var wait func() error
				o, wait, err = e.PlaceOrderNoted("a", r, []byte(`{"k":"claim"}`))
				if err == nil {
					err = wait()
				}
			} else {
				o, err = e.PlaceOrder("a", r)
			}
			if err != nil {
				t.Fatal(err)
			}
			written++
			if cancel {
				if _, err := e.CancelOrder("a", o.ID); err != nil {
					t.Fatal(err)
				}
				written++
			}
		}
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.since > snapshotEvery || (j.snapBytes > 0 && j.since >= snapshotAtLeast && j.sinceBytes >= 2*j.snapBytes) {
			t.Fatalf("%d records (%d bytes) since a snapshot of %d bytes: one was due", j.since, j.sinceBytes, j.snapBytes)
		}
		return j.snapID, written
	}
	if n, w := run(true, false); n < 3 {
		t.Fatalf("placed and cancelled: %d snapshots in %d records; want one every %d", n, w, snapshotAtLeast)
	}
	if n, w := run(false, false); n > 2 {
		t.Fatalf("resting orders: %d snapshots in %d records; want them to thin out as the state grows", n, w)
	}
	// perpgate serve places with the claim noted in the order's record.
	if n, w := run(false, true); n < 1 {
		t.Fatalf("resting orders placed with a note: %d snapshots in %d records; want the same cadence", n, w)
	}
}

// refusingCompactor asks for a snapshot after every record and fails to
// take it while refuse is set.
type refusingCompactor struct {
	memJournal
	refuse bool
	taken  int
}

func (j *refusingCompactor) Snapshot() []byte { return nil }
func (j *refusingCompactor) CompactDue() bool { return true }
func (j *refusingCompactor) Compact(int64, []byte) error {
	if j.refuse {
		return errors.New("no space left on device")
	}
	j.taken++
	return nil
}

// TestFailedSnapshotsAreLogged: a snapshot that cannot be taken is tried
// after every change, and said in the log at once and then once a minute
// while it goes on, and when one is taken again.
func TestFailedSnapshotsAreLogged(t *testing.T) {
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	j := &refusingCompactor{refuse: true}
	e, err := Reopen(Config{Seed: 1, Now: clock.Now, Log: slog.New(slog.NewTextHandler(&out, nil))}, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EnsureAccount("a", decimal.NewFromInt(100_000)); err != nil {
		t.Fatal(err)
	}
	place := func(n int) {
		for range n {
			if _, err := e.PlaceOrder("a", OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit,
				Size: decimal.RequireFromString("0.001"), Price: decimal.RequireFromString("10000")}); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Second)
		}
	}
	place(30)
	if n := strings.Count(out.String(), "paper snapshot failed"); n != 1 {
		t.Fatalf("%d warnings in 32 failed snapshots within a minute, want 1:\n%s", n, out.String())
	}
	place(40)
	if n := strings.Count(out.String(), "paper snapshot failed"); n != 2 || !strings.Contains(out.String(), "failures=63") {
		t.Fatalf("%d warnings after 72 failures over 70 s, want a second one counting 63:\n%s", n, out.String())
	}
	j.refuse = false
	place(1)
	if j.taken != 1 || !strings.Contains(out.String(), "paper snapshot taken again") {
		t.Fatalf("snapshots taken %d, log:\n%s", j.taken, out.String())
	}
}
