package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
)

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestFileIdempotencyCompactsWhileRunning: placements that keep coming,
// their records expiring after 24 h, do not grow the log without bound:
// the running store compacts it, and a restart finds every live record
// and none of the expired or released ones.
func TestFileIdempotencyCompactsWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idem.log")
	clock := testenv.NewClock(time.Now())
	s, err := NewFileIdempotency(path, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	s.compactAt, s.recordBytes = 64<<10, 100
	ctx := context.Background()
	var most int64
	const n = 6000
	for i := range n {
		k := fmt.Sprintf("order-%d", i)
		if _, claimed, err := s.Claim(ctx, k, Record{Deadline: clock.Now().Add(time.Second)}); err != nil || !claimed {
			t.Fatalf("claim %s: %v %v", k, claimed, err)
		}
		if i%10 == 9 {
			if err := s.Release(ctx, k); err != nil {
				t.Fatal(err)
			}
		} else if err := s.Complete(ctx, k, Record{Result: json.RawMessage(`{"orderId":"` + k + `"}`)}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute) // 6,000 minutes: the first ones expire
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		if done != nil {
			<-done // let each compaction finish, as a steady rate would
		}
		most = max(most, fileSize(t, path)+fileSize(t, path+".old")+fileSize(t, path+".base"))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// 24 h is 1,440 of the 6,000 placements: about 170 kB of records
	// live; the log alone would hold 6,000 claims and completions (1.4 MB).
	if most > 1<<20 {
		t.Fatalf("the log and its base reached %d bytes", most)
	}
	if _, err := os.Stat(path + ".base"); err != nil {
		t.Fatalf("no compaction ran: %v", err)
	}
	again, err := NewFileIdempotency(path, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for i := range n {
		k := fmt.Sprintf("order-%d", i)
		got, claimed, err := again.Claim(ctx, k, Record{Deadline: clock.Now().Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		live := i >= n-1439 && i%10 != 9
		if live && (claimed || string(got.Result) != `{"orderId":"`+k+`"}`) {
			t.Fatalf("%s after the restart: %+v claimed=%v, want its result", k, got, claimed)
		}
		if !live && !claimed {
			t.Fatalf("%s (expired or released) survived: %+v", k, got)
		}
	}
}

// TestFileIdempotencyCrashMidCompaction: whatever a crash during a
// compaction leaves (the base, the rotated log and the log, in any
// stage), opening replays them into the same records.
func TestFileIdempotencyCrashMidCompaction(t *testing.T) {
	line := func(k string, rec *Record, exp time.Time) string {
		b, _ := json.Marshal(logLine{Key: k, Record: rec, Expires: exp})
		return string(b) + "\n"
	}
	exp := time.Now().Add(time.Hour)
	done := func(id string) *Record { return &Record{Result: json.RawMessage(`{"orderId":"` + id + `"}`)} }
	pending := &Record{Deadline: exp}
	// Before the compaction: a base, then "a" completed and "b" claimed
	// then released in the log that was rotated, then "c" in the new log.
	base := line("z", done("z"), exp)
	old := line("a", pending, exp) + line("a", done("a"), exp) + line("b", pending, exp) + line("b", nil, time.Time{})
	newer := line("c", done("c"), exp) + line("z", nil, time.Time{})
	compacted := line("z", done("z"), exp) + line("a", done("a"), exp)
	for name, files := range map[string]map[string]string{
		"rotated, base not yet written": {".base": base, ".old": old, "": newer},
		"base written, old not removed": {".base": compacted, ".old": old, "": newer},
		"done":                          {".base": compacted, "": newer},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "idem.log")
			for suffix, content := range files {
				if err := os.WriteFile(path+suffix, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s, err := NewFileIdempotency(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			for k, want := range map[string]string{"a": `{"orderId":"a"}`, "c": `{"orderId":"c"}`, "b": "", "z": ""} {
				got, claimed, err := s.Claim(ctx, k, Record{Deadline: exp})
				if err != nil {
					t.Fatal(err)
				}
				if want == "" && !claimed || want != "" && string(got.Result) != want {
					t.Fatalf("%s: %+v claimed=%v, want %q", k, got, claimed, want)
				}
			}
			if _, err := os.Stat(path + ".old"); !os.IsNotExist(err) {
				t.Fatalf("the rotated log is still there after opening: %v", err)
			}
		})
	}
}
