package venue_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// claimRig is the standalone gateway's placement path without the
// gateway: a file idempotency store and the paper venue in process on
// one data dir.
type claimRig struct {
	t       *testing.T
	dir     string
	idem    *connector.FileIdempotency
	journal *paper.FileJournal
	engine  *paper.Engine
	client  *venue.Client
}

func openClaimRig(t *testing.T, dir string) *claimRig {
	t.Helper()
	idem, err := connector.NewFileIdempotency(filepath.Join(dir, "idempotency.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	j, records, err := paper.OpenFileJournal(filepath.Join(dir, "paper.journal"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := paper.Reopen(paper.Config{Seed: 1}, j, records)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idem.Recover(e.Notes()); err != nil {
		t.Fatal(err)
	}
	j.BeforeCompact(idem.SyncAll)
	r := &claimRig{t: t, dir: dir, idem: idem, journal: j, engine: e,
		client: venue.NewClient("http://paper-venue", venue.InProcessClient(venue.NewHandler(e)))}
	t.Cleanup(func() { r.close() })
	return r
}

func (r *claimRig) close() {
	_ = r.idem.Close()
	_ = r.journal.Close()
}

// crashCopy is the data dir as a crash would leave it had the journal
// reached the disk as it is now and the idempotency log only as idemLog:
// the path under test never waits for that log.
func (r *claimRig) crashCopy(idemLog []byte) string {
	r.t.Helper()
	dir := r.t.TempDir()
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, en := range entries {
		b, err := os.ReadFile(filepath.Join(r.dir, en.Name()))
		if err != nil {
			r.t.Fatal(err)
		}
		if en.Name() == "idempotency.log" {
			b = idemLog
		}
		if err := os.WriteFile(filepath.Join(dir, en.Name()), b, 0o600); err != nil {
			r.t.Fatal(err)
		}
	}
	return dir
}

func (r *claimRig) idemLog() []byte {
	b, err := os.ReadFile(filepath.Join(r.dir, "idempotency.log"))
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// TestClaimRidesWithTheOrder: with the in-process venue taking the held
// claim, a placement's claim, order and result share the journal's one
// durable write: a crash that leaves the journal and loses every line the
// idempotency log took on that path loses nothing promised. Cut after the
// order's record, the restart finds the claim (a retry then looks the
// order up instead of placing again); cut after the result, it finds the
// result. A refused placement leaves no claim behind.
func TestClaimRidesWithTheOrder(t *testing.T) {
	r := openClaimRig(t, t.TempDir())
	ctx := context.Background()
	if _, err := r.client.EnsureAccount(ctx, "a", d("10000")); err != nil {
		t.Fatal(err)
	}
	before := r.idemLog()
	const key = "cred:cid-1"
	claim := connector.Record{Fingerprint: map[string]string{"side": "BUY"}, Deadline: time.Now().Add(time.Minute)}

	bctx, b := appendlog.WithBarrier(ctx)
	b.AllowHold()
	if _, claimed, err := r.idem.Claim(bctx, key, claim); err != nil || !claimed {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	req := venue.OrderRequest{Market: btc, Side: "BUY", Type: "LIMIT", Size: d("0.01"), Price: d("30000"), ClientOrderID: "cid-1"}
	placed, err := r.client.PlaceOrder(bctx, "a", req)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Taken() {
		t.Fatal("the venue did not take the held claim")
	}
	afterOrder := r.crashCopy(before)
	result, _ := json.Marshal(map[string]string{"orderId": placed.ID})
	if err := r.idem.Complete(bctx, key, connector.Record{Result: result, Fingerprint: claim.Fingerprint}); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(); err != nil {
		t.Fatal(err)
	}
	afterResult := r.crashCopy(before)

	// Cut after the order: the order and its claim.
	c1 := openClaimRig(t, afterOrder)
	if o, err := c1.engine.OrderByClientID("a", "cid-1"); err != nil || o.ID != placed.ID {
		t.Fatalf("order after the crash: %+v %v", o, err)
	}
	if rec, ok := c1.idem.Lookup(key); !ok || !rec.Pending() || rec.Fingerprint["side"] != "BUY" {
		t.Fatalf("claim after the crash: %+v %v; want the pending claim", rec, ok)
	}
	c1.close()
	// Cut after the result: the result, also after a second restart (the
	// recovered record is in the log now).
	for range 2 {
		c2 := openClaimRig(t, afterResult)
		if rec, ok := c2.idem.Lookup(key); !ok || string(rec.Result) != string(result) {
			t.Fatalf("result after the crash: %+v %v; want %s", rec, ok, result)
		}
		c2.close()
	}

	// A refused placement (post-only that would cross) left its claim in
	// the journal's record, which replay refuses again: nothing recovered.
	bctx, b = appendlog.WithBarrier(ctx)
	b.AllowHold()
	if _, claimed, err := r.idem.Claim(bctx, "cred:cid-2", claim); err != nil || !claimed {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	bad := req
	bad.ClientOrderID, bad.Price, bad.PostOnly = "cid-2", d("1000000"), true
	if _, err := r.client.PlaceOrder(bctx, "a", bad); err == nil {
		t.Fatal("a crossing post-only order was placed")
	}
	if err := appendlog.Together(b.Wait, b.WaitHeld); err != nil {
		t.Fatal(err)
	}
	c3 := openClaimRig(t, r.crashCopy(before))
	if rec, ok := c3.idem.Lookup("cred:cid-2"); ok {
		t.Fatalf("a refused placement's claim came back: %+v", rec)
	}
	if rec, ok := c3.idem.Lookup(key); !ok || string(rec.Result) != string(result) {
		t.Fatalf("result after the second crash: %+v %v", rec, ok)
	}
}

// TestClaimNotHeldWithoutLeave: a store whose caller did not allow a
// hold (every venue outside the process) writes the claim durably before
// Claim returns, and a venue finds nothing to take.
func TestClaimNotHeldWithoutLeave(t *testing.T) {
	r := openClaimRig(t, t.TempDir())
	ctx, b := appendlog.WithBarrier(context.Background())
	if _, claimed, err := r.idem.Claim(ctx, "cred:x", connector.Record{Deadline: time.Now().Add(time.Minute)}); err != nil || !claimed {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if got := b.Take(r.engine.NoteDeferred); got != nil || b.Taken() {
		t.Fatalf("a claim was held without leave: %s", got)
	}
}
