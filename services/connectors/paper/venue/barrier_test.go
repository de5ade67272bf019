package venue_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// countingJournal keeps records in memory and counts syncs.
type countingJournal struct {
	n     atomic.Uint64
	syncs atomic.Int32
}

func (j *countingJournal) Write([]byte) (uint64, error) { return j.n.Add(1), nil }
func (j *countingJournal) Sync(uint64) error            { j.syncs.Add(1); return nil }

// TestInProcessPlacementDefersItsJournal: a placement through the
// in-process client whose context carries a barrier answers before its
// journal record is durable and leaves the wait in the barrier; without a
// barrier (every caller over HTTP) the venue waits itself.
func TestInProcessPlacementDefersItsJournal(t *testing.T) {
	j := &countingJournal{}
	e, err := paper.Reopen(paper.Config{Seed: 1}, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := venue.NewClient("http://paper-venue", venue.InProcessClient(venue.NewHandler(e)))
	ctx := context.Background()
	if _, err := c.EnsureAccount(ctx, "a", d("10000")); err != nil {
		t.Fatal(err)
	}
	req := venue.OrderRequest{Market: btc, Side: "BUY", Type: "LIMIT", Size: d("0.01"), Price: d("30000")}
	j.syncs.Store(0)
	if _, err := c.PlaceOrder(ctx, "a", req); err != nil {
		t.Fatal(err)
	}
	if n := j.syncs.Load(); n != 1 {
		t.Fatalf("a placement without a barrier synced %d times, want 1", n)
	}
	bctx, b := appendlog.WithBarrier(ctx)
	if _, err := c.PlaceOrder(bctx, "a", req); err != nil {
		t.Fatal(err)
	}
	if n := j.syncs.Load(); n != 1 {
		t.Fatalf("the placement synced before its caller waited (%d syncs)", n)
	}
	if err := b.Wait(); err != nil || j.syncs.Load() != 2 {
		t.Fatalf("barrier: %v after %d syncs, want nil after 2", err, j.syncs.Load())
	}
}
