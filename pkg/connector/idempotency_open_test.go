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

// TestFileIdempotencyOpenTime: a restart with a day of a bot's records
// (here 200,000 placements: a claim and a result each) is ready within
// seconds: opening indexes the results where they are instead of
// decoding and encoding each whole (issue 30).
func TestFileIdempotencyOpenTime(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 130 MB log")
	}
	path := filepath.Join(t.TempDir(), "idem.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	expires := time.Now().Add(IdempotencyTTL)
	const n = 200_000
	for i := range n {
		k := fmt.Sprintf("cred-0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11:bench-5f0c1d2e3a4b-%d", i)
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
	start := time.Now()
	s, err := NewFileIdempotency(path, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Logf("opening %d placements' records took %s", n, took)
	for _, i := range []int{0, n / 2, n - 1} {
		k := fmt.Sprintf("cred-0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11:bench-5f0c1d2e3a4b-%d", i)
		if rec, ok := s.Lookup(k); !ok || string(rec.Result) != string(placementRecord(k).Result) {
			t.Fatalf("%s after opening: %+v %v", k, rec, ok)
		}
	}
	if took > 3*time.Second && !raceEnabled {
		t.Fatalf("opening took %s; want at most 3 s", took)
	}
}

// TestScanLine: the log lines append writes read the same cut at their
// fields as decoded, escaped keys and removals included; a torn line
// does not read.
func TestScanLine(t *testing.T) {
	expires := time.Date(2026, 11, 27, 3, 0, 0, 123456789, time.UTC)
	rec := placementRecord("order-1")
	for _, l := range []logLine{
		{Key: "cred:order-1", Record: &rec, Expires: expires},
		{Key: `cred:a"b<c`, Record: &rec, Expires: expires},
		{Key: "cred:order-2", Record: &Record{Deadline: expires}, Expires: expires},
		{Key: "cred:order-3"},
	} {
		b, _ := json.Marshal(l)
		got, ok := scanLine(b)
		var want rawLine
		if err := json.Unmarshal(b, &want); err != nil || !ok {
			t.Fatalf("%s: read %v, decode %v", b, ok, err)
		}
		if got.Key != want.Key || string(got.Record) != string(want.Record) || !got.Expires.Equal(want.Expires) {
			t.Errorf("%s reads %+v; want %+v", b, got, want)
		}
		if _, ok := scanLine(b[:len(b)-3]); ok {
			t.Errorf("the torn line %s reads", b[:len(b)-3])
		}
	}
}
