package connector

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/contract"
)

// deferringVenue is a venueFake in this process that defers the durable
// write of each placement to its caller's barrier, as the standalone
// gateway's paper venue does; the write finishes when durable is closed.
type deferringVenue struct {
	*venueFake
	durable  chan struct{}
	deferred chan struct{} // closed once a placement deferred its write
	fail     error         // what the deferred write returns
}

func (v *deferringVenue) PlaceLimitOrder(ctx context.Context, c Credential, o OrderRequest) (contract.LimitOrderResult, error) {
	b := appendlog.BarrierFrom(ctx)
	if b == nil {
		return contract.LimitOrderResult{}, errors.New("no barrier: the venue would have waited itself")
	}
	b.Defer(func() error { <-v.durable; return v.fail })
	close(v.deferred)
	return v.venueFake.PlaceLimitOrder(ctx, c, o)
}

// TestPlacementWaitsForTheVenuesDeferredWrite: a placement whose venue
// deferred its durable write answers only once that write is durable, and
// a repeat that reads the stored result waits for it too.
func TestPlacementWaitsForTheVenuesDeferredWrite(t *testing.T) {
	v := &deferringVenue{venueFake: &venueFake{orders: map[string]FoundOrder{}}, durable: make(chan struct{}),
		deferred: make(chan struct{})}
	d := newDispatch(v.venueFake, NewMemoryIdempotency(nil))
	d.r.adapter = v
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	first, repeat := make(chan error, 1), make(chan error, 1)
	go func() { _, err := d.run(ctx, limitOp, limit("b1", "0.01")); first <- err }()
	<-v.deferred
	// Give the placement time to store its result and the repeat time to read it.
	time.Sleep(50 * time.Millisecond)
	go func() { _, err := d.run(ctx, limitOp, limit("b1", "0.01")); repeat <- err }()
	select {
	case err := <-first:
		t.Fatalf("the placement answered (%v) before the venue's write was durable", err)
	case err := <-repeat:
		t.Fatalf("the repeat answered (%v) before the venue's write was durable", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(v.durable)
	for _, c := range []chan error{first, repeat} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	if v.placed != 1 {
		t.Fatalf("placed %d orders, want 1", v.placed)
	}
}

// TestPlacementVenueWriteFails: when the venue's deferred write fails,
// the placement is not reported placed: its state is unknown.
func TestPlacementVenueWriteFails(t *testing.T) {
	v := &deferringVenue{venueFake: &venueFake{orders: map[string]FoundOrder{}}, durable: make(chan struct{}),
		deferred: make(chan struct{}), fail: errors.New("fsync: input/output error")}
	close(v.durable)
	d := newDispatch(v.venueFake, NewMemoryIdempotency(nil))
	d.r.adapter = v
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := d.run(ctx, limitOp, limit("b2", "0.01"))
	ce, ok := contract.AsError(err)
	if !ok || ce.Code != contract.CodeExchangeUnavailable {
		t.Fatalf("got %v, want EXCHANGE_UNAVAILABLE with an unknown outcome", err)
	}
}
