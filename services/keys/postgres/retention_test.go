package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/postgres"
)

// TestAuditRetention: entries older than the cut go, then the oldest
// while the rest take more than the size allowed.
func TestAuditRetention(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	ctx := context.Background()
	s, err := postgres.New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	const account = "0192f1c8-0000-7000-8000-000000000001"
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	pad := []byte(`{"pad":"` + strings.Repeat("x", 900) + `"}`)
	for i := range 300 {
		if err := s.PutAudit(ctx, contract.AuditEntry{Time: start.Add(time.Duration(i) * time.Hour), RequestID: fmt.Sprintf("req-%04d", i),
			AccountID: account, KeyID: "k", KeyDisplay: "mt_test_ab", Operation: "placeLimitOrder", Code: "OK", Params: pad}); err != nil {
			t.Fatal(err)
		}
	}
	left := func() []contract.AuditEntry {
		got, err := s.Audit(ctx, keys.AuditQuery{AccountID: account, Since: start.Add(-time.Hour), Until: start.Add(1000 * time.Hour), Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// Age: the first 100 hours go.
	if _, err := s.PruneAudit(ctx, start.Add(100*time.Hour), 1<<30); err != nil {
		t.Fatal(err)
	}
	got := left()
	if len(got) != 200 || got[0].RequestID != "req-0100" {
		t.Fatalf("%d entries left, first %s; want 200 from req-0100", len(got), got[0].RequestID)
	}
	// Size: room for about 100 of the 200 (each about 1 kB): the oldest go.
	var row int64
	if err := pool.QueryRow(ctx, `SELECT avg(pg_column_size(a.*))::bigint FROM audit_log a`).Scan(&row); err != nil {
		t.Fatal(err)
	}
	dropped, err := s.PruneAudit(ctx, start, 100*row)
	if err != nil || dropped == 0 {
		t.Fatalf("pruning by size dropped %d bytes (%v)", dropped, err)
	}
	got = left()
	if len(got) > 100 || len(got) < 80 || got[len(got)-1].RequestID != "req-0299" {
		t.Fatalf("%d entries left, last %s; want 80 to 100 ending with the newest", len(got), got[len(got)-1].RequestID)
	}
}
