package filestore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	put := func(from, to int) {
		for i := from; i < to; i++ {
			if err := s.PutAudit(ctx, contract.AuditEntry{Time: at.Add(time.Duration(i) * time.Millisecond), RequestID: fmt.Sprintf("req-%04d", i),
				AccountID: account, Operation: "placeLimitOrder", Code: "OK", Params: pad4k}); err != nil {
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
	// Segments of the 1 MB floor, each of an hour's entries: an hour's
	// entries go on until an append seals the log. Then the live log.
	if _, err := s.PruneAudit(ctx, start.Add(-time.Hour), 16<<20); err != nil {
		t.Fatal(err)
	}
	perHour := make([]int, 4)
	for b := range 4 {
		for i := 0; b < 3 || i < 100; i++ {
			at := start.Add(time.Duration(b)*time.Hour + time.Duration(i)*time.Second)
			if err := s.PutAudit(ctx, contract.AuditEntry{Time: at, RequestID: fmt.Sprintf("req-%d-%03d", b, i), AccountID: account,
				Operation: "placeLimitOrder", Code: "OK", Params: pad4k}); err != nil {
				t.Fatal(err)
			}
			perHour[b]++
			if segs, _ := s.segments(); b < 3 && len(segs) == b+1 {
				break
			}
			if i > 1000 {
				t.Fatal("1,000 entries of 4 kB did not seal a log of 1 MB")
			}
		}
	}
	segs, err := s.segments()
	if err != nil || len(segs) != 3 {
		t.Fatalf("%d segments (%v), want 3", len(segs), err)
	}
	page := func(since, until time.Time, limit int) ([]contract.AuditEntry, error) {
		return s.Audit(ctx, keys.AuditQuery{AccountID: account, Since: since, Until: until, Limit: limit})
	}
	makeUnreadable(t, segs[0])
	got, err := page(start.Add(2*time.Hour), start.Add(3*time.Hour), 1000)
	if err != nil || len(got) != perHour[2] || got[0].RequestID != "req-2-000" {
		t.Fatalf("third hour: %d entries (%v), want its %d without reading the first segment", len(got), err, perHour[2])
	}
	if _, err := page(start, start.Add(time.Hour), 1000); err == nil {
		t.Fatal("a page of the first hour did not read the first segment")
	}
	// From the second hour on, ten entries: the second segment fills the
	// page, and neither the third nor the log is read.
	makeUnreadable(t, segs[2])
	got, err = page(start.Add(time.Hour), start.Add(10*time.Hour), 10)
	if err != nil || len(got) != 10 || got[9].RequestID != "req-1-009" {
		t.Fatalf("first page from the second hour: %d entries (%v)", len(got), err)
	}
}

// TestAuditRetentionGoesByEntryTimes: entries stamped ahead of this host's
// clock (the edge's clock, or a test's) are not dropped as old because
// their file was last written earlier by the wall clock.
func TestAuditRetentionGoesByEntryTimes(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ahead := time.Now().UTC().Add(4 * 365 * 24 * time.Hour).Truncate(time.Millisecond)
	if err := s.PutAudit(ctx, contract.AuditEntry{Time: ahead, RequestID: "r-1", AccountID: "acct",
		Operation: "placeLimitOrder", Code: "OK"}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the first seals the log, the second would drop the segment
		if dropped, err := s.PruneAudit(ctx, ahead.Add(-90*24*time.Hour), 1<<30); err != nil || dropped != 0 {
			t.Fatalf("a prune by the entries' clock dropped %d bytes (%v), want none", dropped, err)
		}
	}
	got, err := s.Audit(ctx, keys.AuditQuery{AccountID: "acct", Since: ahead.Add(-time.Hour), Until: ahead.Add(time.Hour), Limit: 10})
	if err != nil || len(got) != 1 {
		t.Fatalf("%d entries after the prunes (%v), want 1", len(got), err)
	}
}

// TestAuditSealedByAppends: the append that makes the log a segment's size
// seals it, with the index its appends gathered; the log a run leaves is
// sealed when the next opens the store, and nothing is lost on the way.
func TestAuditSealedByAppends(t *testing.T) {
	dir := t.TempDir()
	s := openWithSmallSegments(t, dir)
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Second)
	n := 0
	put := func(s *Store, account string) {
		t.Helper()
		if err := s.PutAudit(ctx, contract.AuditEntry{Time: at.Add(time.Duration(n) * time.Millisecond), RequestID: fmt.Sprintf("req-%04d", n),
			AccountID: account, Operation: "placeLimitOrder", Code: "OK", Params: pad4k}); err != nil {
			t.Fatal(err)
		}
		n++
	}
	for segs, _ := s.segments(); len(segs) == 0; segs, _ = s.segments() {
		if n > 1000 {
			t.Fatal("1,000 entries of 4 kB did not seal a log of 1 MB")
		}
		put(s, []string{"a", "b"}[n%2])
	}
	sealed := n
	for range 10 {
		put(s, "c") // the live log
	}
	if err := s.Close(); err != nil { // waits for the segment's index file
		t.Fatal(err)
	}
	segs, _ := s.segments()
	var ix segmentIndex
	if b, err := os.ReadFile(segs[0] + ".idx"); err != nil || json.Unmarshal(b, &ix) != nil {
		t.Fatalf("the sealed segment has no index file: %v", err)
	}
	if !ix.First.Equal(at) || !ix.Last.Equal(at.Add(time.Duration(sealed-1)*time.Millisecond)) || len(ix.Accounts) != 2 {
		t.Fatalf("index %v–%v %v, want %v–%v for accounts a and b", ix.First, ix.Last, ix.Accounts, at, at.Add(time.Duration(sealed-1)*time.Millisecond))
	}

	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if segs, _ := again.segments(); len(segs) != 2 {
		t.Fatalf("%d segments after a restart, want 2: the log the first run left is sealed", len(segs))
	}
	if _, err := os.Stat(filepath.Join(dir, AuditFileName)); !os.IsNotExist(err) {
		t.Fatalf("the log the first run left is still the log: %v", err)
	}
	put(again, "c")
	for account, want := range map[string]int{"a": (sealed + 1) / 2, "b": sealed / 2, "c": 11} {
		got, err := again.Audit(ctx, keys.AuditQuery{AccountID: account, Since: at.Add(-time.Hour), Until: at.Add(time.Hour), Limit: 100000})
		if err != nil || len(got) != want {
			t.Fatalf("account %s: %d entries (%v), want %d", account, len(got), err, want)
		}
	}
}

// TestAuditPendingPageSkipsSettledSegments: a page of PENDING entries (what
// a start settles) reads only the segments that leave a request PENDING:
// one whose final entry went into a later segment (a request in flight
// when the log was sealed) is settled by that segment's index, unread.
func TestAuditPendingPageSkipsSettledSegments(t *testing.T) {
	s := openWithSmallSegments(t, t.TempDir())
	defer s.Close()
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Second)
	// Final entries of 4 kB and PENDING ones of a few hundred bytes: an
	// append that fills a segment is a final one, so requests seldom
	// straddle two segments unless the test makes them.
	n := 0
	put := func(id, code string) {
		t.Helper()
		n++
		e := contract.AuditEntry{Time: at.Add(time.Duration(n) * time.Millisecond), RequestID: id, AccountID: "acct",
			Operation: "placeLimitOrder", Code: code}
		if code != contract.AuditPending {
			e.Params = pad4k
		}
		if err := s.PutAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	pairsUntilSealed := func(want int) { // settled requests until the log is the want-th segment
		t.Helper()
		for i := 0; ; i++ {
			if segs, _ := s.segments(); len(segs) == want {
				return
			}
			if i > 1000 {
				t.Fatal("1,000 requests of 4 kB did not seal a log of 1 MB")
			}
			id := fmt.Sprintf("req-%d-%d", want, i)
			put(id, contract.AuditPending)
			put(id, "OK")
		}
	}
	put("lost", contract.AuditPending) // a crash took its outcome
	pairsUntilSealed(1)
	pairsUntilSealed(2)
	put("straddle", contract.AuditPending)
	pairsUntilSealed(3)
	put("straddle", "OK") // in the fourth segment
	pairsUntilSealed(4)
	put("live", contract.AuditPending)
	segs, _ := s.segments()
	third, _ := s.indexOf(segs[2])
	fourth, _ := s.indexOf(segs[3])
	if third.Settle == nil || !slices.Contains(third.Settle.Pending, "straddle") || fourth.Settle == nil || !slices.Contains(fourth.Settle.Finals, "straddle") {
		t.Fatalf("indexes of the third and fourth segments %+v, %+v: want straddle PENDING in the third, final in the fourth", third.Settle, fourth.Settle)
	}
	// Only the first segment leaves a request PENDING: the others' PENDING
	// entries (straddle, and any request a seal split) have their final
	// entries in the segment or the log after them. A read of them fails.
	for _, seg := range segs[1:] {
		makeUnreadable(t, seg)
	}
	got, err := s.Audit(ctx, keys.AuditQuery{AccountID: "acct", Since: at.Add(-time.Hour), Until: at.Add(time.Hour), Limit: 500, Pending: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.RequestID)
	}
	if strings.Join(ids, " ") != "lost live" {
		t.Fatalf("PENDING entries %v, want lost and live", ids)
	}
}

// pad4k makes an audit entry about 4 kB: 260 of them fill a segment of 1 MB.
var pad4k = []byte(`{"pad":"` + strings.Repeat("0123456789abcdef", 256) + `"}`)

// openWithSmallSegments opens a store in dir whose appends seal the log at
// 1 MB (the segment of a 16 MB retention).
func openWithSmallSegments(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PruneAudit(context.Background(), time.Now().Add(-24*time.Hour), 16<<20); err != nil {
		t.Fatal(err)
	}
	return s
}

// makeUnreadable puts a directory where the segment was: a read of it fails.
func makeUnreadable(t *testing.T, seg string) {
	t.Helper()
	if err := os.Remove(seg); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(seg, 0o700); err != nil {
		t.Fatal(err)
	}
}
