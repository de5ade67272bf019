package connector

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFileIdempotencyProbe1M times reopening a store that holds 1,000,000
// settled placements, right after a compaction and with a large live log.
// It writes about 1.5 GB, so it runs only with PERPGATE_PROBE_1M=1.
func TestFileIdempotencyProbe1M(t *testing.T) {
	if os.Getenv("PERPGATE_PROBE_1M") == "" {
		t.Skip("set PERPGATE_PROBE_1M=1 to write and reopen 1,000,000 records")
	}
	const n, more = 1_000_000, 200_000
	path := filepath.Join(t.TempDir(), "idem.log")
	key := func(i int) string {
		return fmt.Sprintf("cred-0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11:probe-5f0c1d2e3a4b-%d", i)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	expires := time.Now().Add(IdempotencyTTL)
	for i := range n {
		k := key(i)
		claim, _ := json.Marshal(logLine{Key: k, Record: &Record{Fingerprint: placementRecord(k).Fingerprint,
			Deadline: time.Now().Add(time.Minute)}, Expires: expires})
		done := placementRecord(k)
		result, _ := json.Marshal(logLine{Key: k, Record: &done, Expires: expires})
		_, _ = w.Write(append(append(append(claim, '\n'), result...), '\n'))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	open := func(what string) *FileIdempotency {
		t.Helper()
		start := time.Now()
		s, err := NewFileIdempotency(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: open took %s", what, time.Since(start))
		return s
	}
	check := func(s *FileIdempotency, keys ...int) {
		t.Helper()
		start := time.Now()
		for _, i := range keys {
			if rec, ok := s.Lookup(key(i)); !ok || string(rec.Result) != string(placementRecord(key(i)).Result) {
				t.Fatalf("%s: %+v %v", key(i), rec, ok)
			}
		}
		t.Logf("%d look-ups took %s", len(keys), time.Since(start))
	}
	s := open("the log alone")
	check(s, 0, n/2, n-1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open("reopen after a compaction")
	check(s, 0, n/3, n-1)
	// A large live log: placements written as the store writes them,
	// without waiting for each fsync.
	for i := n; i < n+more; i++ {
		k := key(i)
		s.mu.Lock()
		err := s.change(k, &Record{Fingerprint: placementRecord(k).Fingerprint, Deadline: time.Now().Add(time.Minute)})
		if err == nil {
			done := placementRecord(k)
			err = s.change(k, &done)
		}
		s.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SyncAll(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(fmt.Sprintf("reopen with %d placements in the live log", more))
	defer s.Close()
	check(s, 0, n/2, n, n+more/2, n+more-1)
}
