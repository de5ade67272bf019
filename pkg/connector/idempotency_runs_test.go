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

// runFileCount is how many run files the store at path has on disk.
func runFileCount(t *testing.T, path string) int {
	t.Helper()
	files, err := filepath.Glob(path + ".run.*")
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// TestFileIdempotencySealedRuns: settled records sealed into runs answer
// repeats (colliding hashes included), a record that expired can be
// claimed again and its new result wins over the sealed one, runs whose
// records all expired are deleted, and compactions and a restart keep
// every live record (issue 30: the index stays out of the heap).
func TestFileIdempotencySealedRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idem.log")
	clock := testenv.NewClock(time.Now())
	s, err := NewFileIdempotency(path, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	s.sealAt = 100
	s.hashKey = func(k string) uint64 { return uint64(len(k)*7919) % 50 } // many keys a hash
	ctx := context.Background()
	const n = 550
	key := func(i int) string { return fmt.Sprintf("order-%d", i) }
	place := func(s *FileIdempotency, i int, result string) {
		t.Helper()
		k := key(i)
		if _, claimed, err := s.Claim(ctx, k, Record{Deadline: clock.Now().Add(time.Second)}); err != nil || !claimed {
			t.Fatalf("claim %s: %v %v", k, claimed, err)
		}
		rec := placementRecord(result)
		if err := s.Complete(ctx, k, rec); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		place(s, i, key(i))
		clock.Advance(time.Second)
	}
	// want is the result each key answers with, "" when it has none.
	want := func(i int) string { return key(i) }
	check := func(s *FileIdempotency, when string) {
		t.Helper()
		for i := range n {
			k := key(i)
			rec, ok := s.Lookup(k)
			if w := want(i); (w == "") == ok || (ok && string(rec.Result) != string(placementRecord(w).Result)) {
				t.Fatalf("%s: %s reads %s (found %v); want %q", when, k, rec.Result, ok, w)
			}
		}
		if _, ok := s.Lookup("order-none"); ok {
			t.Fatalf("%s: an unknown key was found", when)
		}
	}
	check(s, "running")
	s.mu.Lock()
	runs, hot := len(s.runs), len(s.onDisk)+len(s.entries)
	s.mu.Unlock()
	if runs < 5 || hot >= 100 || runFileCount(t, path) != runs {
		t.Fatalf("%d runs (%d files), %d records in memory; want at least 5 runs and under 100 in memory", runs, runFileCount(t, path), hot)
	}

	// The first 200 expire; 0 to 9 are placed again.
	clock.Advance(IdempotencyTTL - n*time.Second + 200*time.Second - time.Millisecond)
	for i := range 10 {
		place(s, i, key(i)+"-again")
	}
	want = func(i int) string {
		switch {
		case i < 10:
			return key(i) + "-again"
		case i < 200:
			return ""
		}
		return key(i)
	}
	check(s, "after expiry")
	s.mu.Lock()
	runsNow := len(s.runs)
	s.mu.Unlock()
	if runsNow >= runs || runFileCount(t, path) != runsNow {
		t.Fatalf("%d runs (%d files) after the first records expired, %d before; want the expired runs deleted", runsNow, runFileCount(t, path), runs)
	}

	// A compaction moves the runs' records into the base and one run.
	s.mu.Lock()
	s.compactAt, s.recordBytes = 1, 1
	s.mu.Unlock()
	place(s, n, key(n))
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

	again, err := NewFileIdempotency(path, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	check(again, "after a restart")
	again.mu.Lock()
	inMemory, runs := len(again.onDisk)+len(again.entries), len(again.runs)
	again.mu.Unlock()
	if inMemory != 0 {
		t.Fatalf("%d records in memory after a restart; want all in the base's run", inMemory)
	}
	if runFileCount(t, path) != runs {
		t.Fatalf("%d run files after a restart, %d runs; want the others deleted", runFileCount(t, path), runs)
	}
}

// TestFileIdempotencyMemoryFlat: once sealed, a record costs a few bytes
// of heap, so a day of records does not grow the process.
func TestFileIdempotencyMemoryFlat(t *testing.T) {
	s, err := NewFileIdempotency(filepath.Join(t.TempDir(), "idem.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.sealAt = 1000
	ctx := context.Background()
	const n = 10_000
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
	per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	t.Logf("%.1f bytes of heap per completed record, %d runs", per, len(s.runs))
	if per > 12 {
		t.Fatalf("%.1f bytes of heap per completed record; want at most 12", per)
	}
	runtime.KeepAlive(s)
}

// TestFileIdempotencyRecoverAgainstSealedRecords: Recover skips the
// journal lines of keys the store holds settled (in runs or on disk by
// hash) without decoding them, and takes the lines of keys it lacks even
// when their hash is a held key's (issue 30: a restart reads only the
// start of each held line).
func TestFileIdempotencyRecoverAgainstSealedRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idem.log")
	clock := testenv.NewClock(time.Now())
	s, err := NewFileIdempotency(path, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.sealAt = 40
	s.hashKey = func(k string) uint64 { return uint64(len(k)*7919) % 7 } // many keys a hash
	ctx := context.Background()
	expires := clock.Now().Add(IdempotencyTTL)
	line := func(k string, rec Record) []byte {
		b, err := json.Marshal(logLine{Key: k, Record: &rec, Expires: expires})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var lines [][]byte
	for i := range 130 { // held: sealed into runs, by hash on disk, in memory
		k := fmt.Sprintf("held-%d", i)
		if _, claimed, err := s.Claim(ctx, k, Record{Deadline: clock.Now().Add(time.Minute)}); err != nil || !claimed {
			t.Fatalf("claim %s: %v %v", k, claimed, err)
		}
		if err := s.Complete(ctx, k, placementRecord(k)); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line(k, Record{Deadline: clock.Now().Add(time.Minute)}), line(k, placementRecord(k+"-journal")))
	}
	s.mu.Lock()
	runs := len(s.runs)
	s.mu.Unlock()
	if runs == 0 {
		t.Fatal("no runs were sealed; the test would not reach them")
	}
	for i := range 20 { // lost from the log: same hashes as held keys
		k := fmt.Sprintf("lost-%d", i)
		lines = append(lines, line(k, Record{Deadline: clock.Now().Add(time.Minute)}), line(k, placementRecord(k)))
	}
	n, err := s.Recover(lines)
	if err != nil || n != 40 {
		t.Fatalf("Recover applied %d lines (%v); want the 40 of the lost keys", n, err)
	}
	for i := range 130 {
		k := fmt.Sprintf("held-%d", i)
		if rec, ok := s.Lookup(k); !ok || string(rec.Result) != string(placementRecord(k).Result) {
			t.Fatalf("%s reads %s after Recover; want the log's own result", k, rec.Result)
		}
	}
	for i := range 20 {
		k := fmt.Sprintf("lost-%d", i)
		if rec, ok := s.Lookup(k); !ok || rec.Pending() || string(rec.Result) != string(placementRecord(k).Result) {
			t.Fatalf("%s reads %s after Recover; want the journal's result", k, rec.Result)
		}
	}
}
