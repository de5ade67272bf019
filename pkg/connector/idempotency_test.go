package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestIdempotencyStores runs one suite against every store.
func TestIdempotencyStores(t *testing.T) {
	stores := map[string]func(t *testing.T) IdempotencyStore{
		"memory": func(t *testing.T) IdempotencyStore { return NewMemoryIdempotency(nil) },
		"file": func(t *testing.T) IdempotencyStore {
			s, err := NewFileIdempotency(filepath.Join(t.TempDir(), "idem.log"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"redis": func(t *testing.T) IdempotencyStore {
			rdb, prefix := testenv.RedisPrefix(t)
			return NewRedisIdempotency(rdb, prefix)
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) { storeSuite(t, open(t)) })
	}
}

func storeSuite(t *testing.T, s IdempotencyStore) {
	ctx := context.Background()
	fp := map[string]string{"side": "BUY", "size": "1"}
	claim := Record{Fingerprint: fp, Deadline: time.Now().Add(time.Hour)}
	if _, claimed, err := s.Claim(ctx, "k1", claim); err != nil || !claimed {
		t.Fatalf("first claim: claimed=%v err=%v", claimed, err)
	}
	got, claimed, err := s.Claim(ctx, "k1", claim)
	if err != nil || claimed || !got.Pending() || got.Stale(time.Now()) || got.Fingerprint["size"] != "1" {
		t.Fatalf("repeat of a live claim: %+v claimed=%v err=%v", got, claimed, err)
	}
	done := Record{Result: json.RawMessage(`{"orderId":"7"}`), Fingerprint: fp}
	if err := s.Complete(ctx, "k1", done); err != nil {
		t.Fatal(err)
	}
	got, claimed, err = s.Claim(ctx, "k1", claim)
	if err != nil || claimed || got.Pending() || string(got.Result) != `{"orderId":"7"}` {
		t.Fatalf("repeat of a completed placement: %+v claimed=%v err=%v", got, claimed, err)
	}

	// A stale claim is taken over once: the second taker loses.
	stale := Record{Fingerprint: fp, Deadline: time.Now().Add(-time.Second)}
	if _, claimed, _ := s.Claim(ctx, "k2", stale); !claimed {
		t.Fatal("claim k2")
	}
	got, _, _ = s.Claim(ctx, "k2", claim)
	if !got.Stale(time.Now()) {
		t.Fatalf("k2 not stale: %+v", got)
	}
	if err := s.TakeOver(ctx, "k2", got, claim); err != nil {
		t.Fatalf("take over: %v", err)
	}
	if err := s.TakeOver(ctx, "k2", got, claim); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("second take over: %v, want ErrClaimLost", err)
	}
	if err := s.Release(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	if _, claimed, _ := s.Claim(ctx, "k2", claim); !claimed {
		t.Fatal("released key not claimable")
	}
}

// TestFileIdempotencySurvivesRestart: records written before a restart
// answer after it; expired ones are gone.
func TestFileIdempotencySurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idem.log")
	clock := testenv.NewClock(time.Now())
	s, err := NewFileIdempotency(path, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []string{"old", "kept"} {
		if _, claimed, err := s.Claim(ctx, k, Record{Deadline: clock.Now().Add(time.Second)}); !claimed || err != nil {
			t.Fatal(k, err)
		}
		clock.Advance(12 * time.Hour)
		if err := s.Complete(ctx, k, Record{Result: json.RawMessage(`{"orderId":"` + k + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Release(ctx, "nothing-there")
	s.Close()
	clock.Advance(18 * time.Hour) // "old" completed 30 h ago, "kept" 18 h ago
	again, err := NewFileIdempotency(path, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got, claimed, _ := again.Claim(ctx, "kept", Record{Deadline: clock.Now()}); claimed || string(got.Result) != `{"orderId":"kept"}` {
		t.Fatalf("kept: %+v claimed=%v", got, claimed)
	}
	if _, claimed, _ := again.Claim(ctx, "old", Record{Deadline: clock.Now()}); !claimed {
		t.Fatal("a record older than 24 h survived the restart")
	}
}

// TestLegacyRecord: a value stored before records had a shape (a bare
// result object) still answers as a completed placement.
func TestLegacyRecord(t *testing.T) {
	r, err := decodeRecord([]byte(`{"orderId":"1","status":"OPEN"}`))
	if err != nil || r.Pending() || string(r.Result) != `{"orderId":"1","status":"OPEN"}` {
		t.Fatalf("%+v %v", r, err)
	}
}

// TestFileIdempotencyConcurrent: placements at once share the log's
// fsyncs, and every one of them is there after a restart.
func TestFileIdempotencyConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idem.log")
	s, err := NewFileIdempotency(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const n = 48
	errs := make(chan error, n)
	for i := range n {
		go func() {
			k := fmt.Sprintf("order-%d", i)
			if _, claimed, err := s.Claim(ctx, k, Record{Deadline: time.Now().Add(time.Minute)}); err != nil || !claimed {
				errs <- fmt.Errorf("claim %s: claimed=%v err=%v", k, claimed, err)
				return
			}
			errs <- s.Complete(ctx, k, Record{Result: json.RawMessage(`{"orderId":"` + k + `"}`)})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	again, err := NewFileIdempotency(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for i := range n {
		k := fmt.Sprintf("order-%d", i)
		if got, claimed, _ := again.Claim(ctx, k, Record{}); claimed || string(got.Result) != `{"orderId":"`+k+`"}` {
			t.Fatalf("%s after the restart: %+v claimed=%v", k, got, claimed)
		}
	}
}

// TestNoOneHearsOfAChangeBeforeItIsDurable: a repeat of a placement whose
// claim is still on its way to disk waits for it, and a failed sync is
// the placement's error.
func TestNoOneHearsOfAChangeBeforeItIsDurable(t *testing.T) {
	s := NewMemoryIdempotency(nil)
	var pos uint64
	s.persist = func(string, *Record, time.Time) (uint64, diskRef, error) { pos++; return pos, diskRef{}, nil }
	// The first sync (the claim's) fails; the second (the repeat's) does not.
	release := []chan error{make(chan error, 1), make(chan error, 1)}
	entered := make(chan struct{}, 2)
	var calls atomic.Int32
	s.durable = func(uint64) error {
		c := release[calls.Add(1)-1]
		entered <- struct{}{}
		return <-c
	}
	ctx := context.Background()
	first := make(chan error)
	go func() {
		_, _, err := s.Claim(ctx, "k", Record{Deadline: time.Now().Add(time.Minute)})
		first <- err
	}()
	<-entered
	repeat := make(chan bool)
	go func() {
		_, claimed, _ := s.Claim(ctx, "k", Record{Deadline: time.Now().Add(time.Minute)})
		repeat <- claimed
	}()
	select {
	case <-entered: // the repeat waits on the log, not on the store's lock
	case <-repeat:
		t.Fatal("the repeat answered before the claim it saw was durable")
	case <-time.After(5 * time.Second):
		t.Fatal("the repeat neither answered nor waited for the log")
	}
	disk := errors.New("input/output error")
	release[0] <- disk
	release[1] <- nil
	if err := <-first; !errors.Is(err, disk) {
		t.Fatalf("claim = %v; want the sync error", err)
	}
	if claimed := <-repeat; claimed {
		t.Fatal("the repeat claimed a key already claimed")
	}
}

// TestGuardedIdempotencyRefusesPlacements: while the guard objects (a
// Redis that may evict), a placement answers SERVICE_UNAVAILABLE with the
// guard's reason and reaches no venue; once it stops objecting, it places.
func TestGuardedIdempotencyRefusesPlacements(t *testing.T) {
	v := &venueFake{orders: map[string]FoundOrder{}}
	var why error = errors.New(`redis maxmemory-policy is "volatile-lru"`)
	d := newDispatch(v, GuardIdempotency(NewMemoryIdempotency(nil), func() error { return why }))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := d.run(ctx, limitOp, limit("g1", "0.01"))
	ce, _ := contract.AsError(err)
	if ce.Code != contract.CodeServiceUnavailable || !strings.Contains(ce.Message, "maxmemory-policy") || ce.RetryAfterSeconds < 1 {
		t.Fatalf("got %+v, want SERVICE_UNAVAILABLE naming maxmemory-policy with a Retry-After", err)
	}
	if v.placed != 0 {
		t.Fatalf("placed %d orders while refused", v.placed)
	}
	why = nil
	if _, err := d.run(ctx, limitOp, limit("g1", "0.01")); err != nil || v.placed != 1 {
		t.Fatalf("after the guard cleared: %v, %d placed", err, v.placed)
	}
}
