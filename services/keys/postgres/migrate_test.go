package postgres_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/postgres"
)

func TestMigrationsConcurrentAndIdempotent(t *testing.T) {
	pool, dsn := testenv.Postgres(t)
	ctx := context.Background()
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := postgres.Open(ctx, dsn)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
	}
	var versions int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found: %v", err)
	}
	if versions != len(files) {
		t.Fatalf("schema_migrations has %d rows, want one per migration (%d)", versions, len(files))
	}
	if _, err := postgres.New(ctx, pool); err != nil {
		t.Fatalf("reopen: %v", err)
	}
}

func TestOpenBadDSNHidesPassword(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://u:hunter2secret@[::1:bad/x")
	if err == nil {
		t.Fatal("bad DSN accepted")
	}
	if got := err.Error(); strings.Contains(got, "hunter2secret") {
		t.Fatalf("error %q reveals the password", got)
	}
}
