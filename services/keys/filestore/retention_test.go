package filestore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// TestAuditRetention: the audit log is sealed into segments as it grows,
// reads cover every segment, and retention drops whole segments, oldest
// first, by age and by size.
func TestAuditRetention(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const account = "acct"
	at := time.Now().UTC().Truncate(time.Second)
	// About 4 kB an entry: 260 of them make a segment of the 1 MB floor.
	pad := []byte(`{"pad":"` + strings.Repeat("0123456789abcdef", 256) + `"}`)
	put := func(from, to int) {
		for i := from; i < to; i++ {
			if err := s.PutAudit(ctx, contract.AuditEntry{Time: at.Add(time.Duration(i) * time.Millisecond), RequestID: fmt.Sprintf("req-%04d", i),
				AccountID: account, Operation: "placeLimitOrder", Code: "OK", Params: pad}); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func() int {
		got, err := s.Audit(ctx, keys.AuditQuery{AccountID: account, Since: at.Add(-time.Hour), Until: at.Add(time.Hour), Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	const maxBytes = 16 << 20 // segments of 1 MB
	// Three batches, each sealed into a segment of its own.
	for b := range 3 {
		put(b*260, (b+1)*260)
		if _, err := s.PruneAudit(ctx, at.Add(-time.Hour), maxBytes); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // distinct segment names
	}
	segs, err := s.segments()
	if err != nil || len(segs) != 3 {
		t.Fatalf("%d segments (%v), want 3", len(segs), err)
	}
	put(780, 880) // the live log
	if n := count(); n != 880 {
		t.Fatalf("read %d entries across the segments, want 880", n)
	}
	// Size: keep at most two segments' worth: the oldest goes first.
	seg0, _ := os.Stat(segs[0])
	if _, err := s.PruneAudit(ctx, at.Add(-time.Hour), 2*seg0.Size()+seg0.Size()/2); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 620 {
		t.Fatalf("%d entries after pruning by size, want 620 (the oldest segment dropped)", n)
	}
	if _, err := os.Stat(segs[0]); !os.IsNotExist(err) {
		t.Fatalf("the oldest segment is still there: %v", err)
	}
	// Age: everything sealed before now is older than the cut.
	dropped, err := s.PruneAudit(ctx, time.Now().Add(time.Hour), maxBytes)
	if err != nil || dropped == 0 {
		t.Fatalf("pruning by age dropped %d bytes (%v)", dropped, err)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d entries older than the retention survived", n)
	}
	put(5000, 5010) // the log goes on after its segments are gone
	if n := count(); n != 10 {
		t.Fatalf("%d entries after pruning and appending, want 10", n)
	}
}

// TestAuditPagesReadByIndex: a page reads only the segments whose index
// says they may hold its entries, and stops at the first segment that
// comes after a full page; a segment it needs is still read.
func TestAuditPagesReadByIndex(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const account = "acct"
	start := time.Now().UTC().Truncate(time.Hour).Add(-10 * time.Hour)
	pad := []byte(`{"pad":"` + strings.Repeat("0123456789abcdef", 256) + `"}`)
	// Three segments of an hour's entries each, then the live log.
	for b := range 4 {
		for i := range 260 {
			at := start.Add(time.Duration(b)*time.Hour + time.Duration(i)*time.Second)
			if err := s.PutAudit(ctx, contract.AuditEntry{Time: at, RequestID: fmt.Sprintf("req-%d-%03d", b, i), AccountID: account,
				Operation: "placeLimitOrder", Code: "OK", Params: pad}); err != nil {
				t.Fatal(err)
			}
		}
		if b < 3 {
			if _, err := s.PruneAudit(ctx, start.Add(-time.Hour), 16<<20); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	segs, err := s.segments()
	if err != nil || len(segs) != 3 {
		t.Fatalf("%d segments (%v), want 3", len(segs), err)
	}
	// A segment read now fails: a directory where its file was.
	unreadable := func(seg string) {
		if err := os.Remove(seg); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(seg, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	page := func(since, until time.Time, limit int) ([]contract.AuditEntry, error) {
		return s.Audit(ctx, keys.AuditQuery{AccountID: account, Since: since, Until: until, Limit: limit})
	}
	unreadable(segs[0])
	got, err := page(start.Add(2*time.Hour), start.Add(3*time.Hour), 1000)
	if err != nil || len(got) != 260 || got[0].RequestID != "req-2-000" {
		t.Fatalf("third hour: %d entries (%v), want its 260 without reading the first segment", len(got), err)
	}
	if _, err := page(start, start.Add(time.Hour), 1000); err == nil {
		t.Fatal("a page of the first hour did not read the first segment")
	}
	// From the second hour on, ten entries: the second segment fills the
	// page, and neither the third nor the log is read.
	unreadable(segs[2])
	got, err = page(start.Add(time.Hour), start.Add(10*time.Hour), 10)
	if err != nil || len(got) != 10 || got[9].RequestID != "req-1-009" {
		t.Fatalf("first page from the second hour: %d entries (%v)", len(got), err)
	}
}
