package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
)

// placementRecord is a completed record shaped as a placement's: its
// result and the order's fingerprint.
func placementRecord(k string) Record {
	return Record{
		Result: json.RawMessage(`{"orderId":"` + k + `","clientOrderId":"` + k + `","market":"BTC-USD-PERP","side":"BUY",` +
			`"type":"LIMIT","size":"0.001","price":"10000","filledSize":"0","status":"OPEN","timestamp":1764201600}`),
		Fingerprint: map[string]string{"market": "BTC-USD-PERP", "side": "BUY", "type": "LIMIT", "size": "0.001",
			"price": "10000", "postOnly": "true", "reduceOnly": "false", "timeInForce": "GTC"},
	}
}

// TestFileIdempotencyKeepsResultsOnDisk: completed records live on disk,
// not in memory, and a running store answers each live one from there
// through compactions that move them into a new base (issue 30).
func TestFileIdempotencyKeepsResultsOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idem.log")
	clock := testenv.NewClock(time.Now())
	s, err := NewFileIdempotency(path, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.compactAt, s.recordBytes = 64<<10, 100
	ctx := context.Background()
	const n = 1500
	compactions := 0
	for i := range n {
		k := fmt.Sprintf("order-%d", i)
		if _, claimed, err := s.Claim(ctx, k, Record{Deadline: clock.Now().Add(time.Second)}); err != nil || !claimed {
			t.Fatalf("claim %s: %v %v", k, claimed, err)
		}
		if err := s.Complete(ctx, k, placementRecord(k)); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		if done != nil {
			<-done
			s.mu.Lock()
			if s.done == done {
				compactions++
				s.done = nil
			}
			s.mu.Unlock()
		}
	}
	if compactions < 2 {
		t.Fatalf("%d compactions ran; the test needs records moved at least twice", compactions)
	}
	s.mu.Lock()
	inMemory, onDisk := len(s.entries), len(s.onDisk)+s.runLen()
	s.mu.Unlock()
	if inMemory != 0 || onDisk != n {
		t.Fatalf("%d records kept in memory and %d on disk (by hash or in the base's run); want all %d on disk", inMemory, onDisk, n)
	}
	for i := range n {
		k := fmt.Sprintf("order-%d", i)
		got, claimed, err := s.Claim(ctx, k, Record{Deadline: clock.Now().Add(time.Second)})
		want := placementRecord(k)
		if err != nil || claimed || string(got.Result) != string(want.Result) || got.Fingerprint["price"] != "10000" {
			t.Fatalf("%s on the running store: %+v claimed=%v err=%v; want its result", k, got, claimed, err)
		}
	}
}

// TestFileIdempotencyMemoryPerRecord: a completed placement's record
// costs little heap (it cost about 740 bytes when records were kept in
// memory).
func TestFileIdempotencyMemoryPerRecord(t *testing.T) {
	s, err := NewFileIdempotency(filepath.Join(t.TempDir(), "idem.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const n = 5000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		k := fmt.Sprintf("cred-0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11:bench-5f0c1d2e3a4b-%d", i)
		if _, _, err := s.Claim(ctx, k, Record{Deadline: time.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, k, placementRecord(k)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%.0f bytes of heap per completed record", per)
	if per > 120 {
		t.Fatalf("%.0f bytes of heap per completed record; want at most 120", per)
	}
	runtime.KeepAlive(s)
}

// TestFileIdempotencyHashCollisions: keys whose hashes collide keep
// their own records (the later ones by name), a release drops only its
// own, and compactions and a restart keep them all.
func TestFileIdempotencyHashCollisions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idem.log")
	s, err := NewFileIdempotency(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	collide := func(k string) uint64 { return uint64(len(k) % 3) }
	s.hashKey = collide
	s.compactAt, s.recordBytes = 16<<10, 10
	ctx := context.Background()
	const n = 60
	for i := range n {
		k := fmt.Sprintf("order-%d", i)
		if _, claimed, err := s.Claim(ctx, k, Record{Deadline: time.Now().Add(time.Minute)}); err != nil || !claimed {
			t.Fatalf("claim %s: %v %v", k, claimed, err)
		}
		if i%7 == 3 {
			if err := s.Release(ctx, k); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := s.Complete(ctx, k, placementRecord(k)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(s *FileIdempotency, when string) {
		t.Helper()
		for i := range n {
			k := fmt.Sprintf("order-%d", i)
			rec, ok := s.Lookup(k)
			if released := i%7 == 3; released == ok || (ok && string(rec.Result) != string(placementRecord(k).Result)) {
				t.Fatalf("%s: %s reads %s (found %v); released %v", when, k, rec.Result, ok, released)
			}
		}
	}
	check(s, "running")
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		t.Fatal("no compaction ran")
	}
	<-done
	check(s, "after a compaction")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := NewFileIdempotency(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	check(again, "after a restart")
}
