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
