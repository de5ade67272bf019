package connector

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
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

// countingStore is a MemoryIdempotency whose log counts the waits for its
// durability (dur) and keeps its lines.
func countingStore() (*MemoryIdempotency, *atomic.Int32) {
	s := NewMemoryIdempotency(nil)
	var dur atomic.Int32
	var pos uint64
	s.persist = func(key string, rec *Record, expires time.Time) (uint64, diskRef, error) {
		pos++
		s.line, _ = json.Marshal(logLine{Key: key, Record: rec, Expires: expires})
		return pos, diskRef{}, nil
	}
	s.durable = func(uint64) error { dur.Add(1); return nil }
	return s, &dur
}

// claimVenue is a venueFake that notes how many durable waits of the
// store had run when it was called, and, as a ClaimCarrier (carries),
// takes the held claim into its own deferred write when take is set.
type claimVenue struct {
	*venueFake
	dur            *atomic.Int32
	carries, take  bool
	durAtCall      int32
	durAtVenueSync atomic.Int32
	claim          []byte
	notes          [][]byte
}

func (v *claimVenue) CarriesClaims() bool { return v.carries }

func (v *claimVenue) PlaceLimitOrder(ctx context.Context, c Credential, o OrderRequest) (contract.LimitOrderResult, error) {
	v.durAtCall = v.dur.Load()
	b := appendlog.BarrierFrom(ctx)
	if v.take {
		v.claim = b.Take(func(line []byte) (func() error, error) {
			v.notes = append(v.notes, line)
			return func() error { return nil }, nil
		})
	}
	b.Defer(func() error { v.durAtVenueSync.Store(v.dur.Load()); return nil })
	return v.venueFake.PlaceLimitOrder(ctx, c, o)
}

// TestClaimDurableBeforeARemoteVenue: for a venue that does not carry
// claims (every venue outside the process) the claim is durable before
// the venue is called.
func TestClaimDurableBeforeARemoteVenue(t *testing.T) {
	s, dur := countingStore()
	v := &claimVenue{venueFake: &venueFake{orders: map[string]FoundOrder{}}, dur: dur, take: true}
	d := newDispatch(v.venueFake, s)
	d.r.adapter = v
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := d.run(ctx, limitOp, limit("r1", "0.01")); err != nil {
		t.Fatal(err)
	}
	if v.durAtCall < 1 || v.claim != nil {
		t.Fatalf("the venue was called after %d durable waits (claim held: %s); want the claim durable first", v.durAtCall, v.claim)
	}
}

// TestCarriedClaimSharesTheVenuesWrite: a venue that carries claims takes
// the claim and the result into its own durable write; the placement
// waits for nothing else. One that carries claims but did not take this
// one has the claim durable before its own write.
func TestCarriedClaimSharesTheVenuesWrite(t *testing.T) {
	s, dur := countingStore()
	v := &claimVenue{venueFake: &venueFake{orders: map[string]FoundOrder{}}, dur: dur, carries: true, take: true}
	d := newDispatch(v.venueFake, s)
	d.r.adapter = v
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := d.run(ctx, limitOp, limit("c1", "0.01")); err != nil {
		t.Fatal(err)
	}
	var claim, result logLine
	if err := json.Unmarshal(v.claim, &claim); err != nil || claim.Key != "cred-1:c1" || !claim.Record.Pending() {
		t.Fatalf("the venue took %s (%v); want the pending claim", v.claim, err)
	}
	if len(v.notes) != 1 || json.Unmarshal(v.notes[0], &result) != nil || result.Key != "cred-1:c1" || result.Record.Pending() {
		t.Fatalf("notes %q; want the result", v.notes)
	}
	if n := dur.Load(); n != 0 {
		t.Fatalf("the placement waited for the idempotency log %d times; want 0", n)
	}
	if rec, ok := s.Lookup("cred-1:c1"); !ok || rec.Pending() {
		t.Fatalf("stored %+v %v; want the result", rec, ok)
	}

	v.take = false
	if _, err := d.run(ctx, limitOp, limit("c2", "0.01")); err != nil {
		t.Fatal(err)
	}
	if v.durAtCall != 0 || v.durAtVenueSync.Load() < 1 {
		t.Fatalf("durable waits: %d at the call, %d at the venue's write; want the claim's between them",
			v.durAtCall, v.durAtVenueSync.Load())
	}
}
