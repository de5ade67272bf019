package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/filestore"
)

func TestPersistenceAndModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := context.Background()
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := keys.Account{ID: uuid.NewString(), Name: "acme", Tier: contract.TierPro, CreatedAt: time.Date(2030, 1, 1, 0, 0, 0, 1000, time.UTC)}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		path string
		mode os.FileMode
	}{
		{name: "dir", path: dir, mode: 0o700},
		{name: "file", path: filepath.Join(dir, filestore.FileName), mode: 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fi, err := os.Stat(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tt.mode {
				t.Fatalf("mode = %v, want %v", fi.Mode().Perm(), tt.mode)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("data dir holds %d entries, want only %s (no temp files left)", len(entries), filestore.FileName)
	}

	reopened, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := reopened.Account(ctx, a.ID)
	if err != nil || got != a {
		t.Fatalf("after reopen: %+v, %v; want %+v", got, err, a)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		msg     string
	}{
		{name: "corrupt", content: `{"version":1,`, msg: "unexpected end of JSON"},
		{name: "future version", content: `{"version":99}`, msg: "unsupported format version 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, filestore.FileName), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := filestore.Open(dir)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %q", err, tt.msg)
			}
		})
	}
}

func TestFailedWriteKeepsState(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A non-empty directory where the state file goes makes the rename fail.
	if err := os.MkdirAll(filepath.Join(dir, filestore.FileName, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	if err := s.CreateAccount(ctx, keys.Account{ID: id, Tier: contract.TierFree}); err == nil {
		t.Fatal("write succeeded although the state file cannot be replaced")
	}
	if _, err := s.Account(ctx, id); !errors.Is(err, keys.ErrAccountNotFound) {
		t.Fatalf("account after failed write: %v, want ErrAccountNotFound", err)
	}
}

// TestConcurrentAudit: entries stored at once, pending and final in any
// order, read back as one final entry per request, also after a reopen.
// TestConcurrentAudit covers both writers: PutAudit (the keys service's
// consumer, on disk when it returns) and AppendAudit (the standalone edge,
// written when it returns and made durable by the syncer, so Close leaves
// every entry on disk).
func TestConcurrentAudit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(*filestore.Store, context.Context, contract.AuditEntry) error
	}{
		{"PutAudit", (*filestore.Store).PutAudit},
		{"AppendAudit", (*filestore.Store).AppendAudit},
	} {
		t.Run(tt.name, func(t *testing.T) { testConcurrentAudit(t, tt.write) })
	}
}

func testConcurrentAudit(t *testing.T, write func(*filestore.Store, context.Context, contract.AuditEntry) error) {
	dir := t.TempDir()
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	account := "0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11"
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	const requests = 16
	errs := make(chan error, 2*requests)
	for i := range requests {
		for _, code := range []string{contract.AuditPending, "OK"} {
			go func() {
				errs <- write(s, ctx, contract.AuditEntry{Time: at, RequestID: fmt.Sprintf("req-%02d", i),
					AccountID: account, Operation: "placeLimitOrder", Code: code, OrderIDs: []string{}})
			}()
		}
	}
	for range 2 * requests {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	check := func(s *filestore.Store) {
		t.Helper()
		got, err := s.Audit(ctx, keys.AuditQuery{AccountID: account, Since: at.Add(-time.Hour), Until: at.Add(time.Hour), Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != requests {
			t.Fatalf("%d entries; want %d", len(got), requests)
		}
		for _, e := range got {
			if e.Code != "OK" {
				t.Errorf("%s reads %s; want the final entry", e.RequestID, e.Code)
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	check(reopened)
}
