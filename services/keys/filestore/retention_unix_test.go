//go:build unix

package filestore

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// TestAuditAppendsDoNotWaitForReads: an audit page reading a segment that
// has no index yet (a segment a previous run left) holds up no append. The
// segment is a FIFO, so its read waits until the test lets it end.
func TestAuditAppendsDoNotWaitForReads(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	at := time.Now().UTC()
	put := func(id string) error {
		return s.PutAudit(ctx, contract.AuditEntry{Time: at, RequestID: id, AccountID: "acct", Operation: "placeLimitOrder", Code: "OK"})
	}
	if err := put("req-1"); err != nil {
		t.Fatal(err)
	}
	seg := s.auditPath() + "." + at.Add(-time.Hour).Format(segmentTime)
	if err := syscall.Mkfifo(seg, 0o600); err != nil {
		t.Fatal(err)
	}
	paged := make(chan error, 1)
	go func() {
		got, err := s.Audit(ctx, keys.AuditQuery{AccountID: "acct", Since: at.Add(-2 * time.Hour), Until: at.Add(time.Hour), Limit: 10})
		if err == nil && len(got) == 0 {
			err = errors.New("the page has no entry")
		}
		paged <- err
	}()
	// The writer's open succeeds once the page is opening the segment to
	// index it; from then on the page waits in its read.
	var w *os.File
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if w, err = os.OpenFile(seg, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not read the segment: %v", err)
		}
	}
	appended := make(chan error, 1)
	go func() { appended <- put("req-2") }()
	select {
	case err := <-appended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		w.Close()
		t.Fatal("an append waited for an audit page's read of a segment")
	}
	w.Close() // the segment ends: empty, and indexed as such
	if err := <-paged; err != nil {
		t.Fatal(err)
	}
}
