package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/postgres"
	"github.com/shopspring/decimal"
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

// TestMigrationOnExistingDatabase: a database left by a release before
// maxPositionNotional (migrations 1 to 3 applied, a guarded key stored)
// opens with the new column, the key keeps its guards and takes the new one.
func TestMigrationOnExistingDatabase(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	ctx := context.Background()
	files, err := filepath.Glob("migrations/000[123]_*.sql")
	if err != nil || len(files) != 3 {
		t.Fatalf("migrations 1 to 3: %v %v", files, err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		sql, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, i+1, filepath.Base(f)); err != nil {
			t.Fatal(err)
		}
	}
	acct, keyID, hash := uuid.NewString(), uuid.NewString(), strings.Repeat("ab", 32)
	if _, err := pool.Exec(ctx, `INSERT INTO accounts (id, tier, created_at) VALUES ($1, 'pro', now())`, acct); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO api_keys (id, account_id, key_hash, display, env, created_at,
		read_only, allowed_markets, max_order_notional, max_leverage)
		VALUES ($1, $2, $3, 'mt_test_abcd', 'test', now(), true, '{BTC}', 1000, 5)`, keyID, acct, hash); err != nil {
		t.Fatal(err)
	}

	s, err := postgres.New(ctx, pool)
	if err != nil {
		t.Fatalf("open an existing database: %v", err)
	}
	k, err := s.KeyByHash(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	if !k.ReadOnly || k.MaxOrderNotional == nil || k.MaxOrderNotional.String() != "1000" || k.MaxLeverage != 5 || k.MaxPositionNotional != nil {
		t.Fatalf("guards after the migration: %+v", k.Guards)
	}
	limit := decimal.RequireFromString("2500.5")
	k, err = s.UpdateGuards(ctx, keyID, func(g contract.Guards) (contract.Guards, error) {
		g.MaxPositionNotional = &limit
		return g, nil
	})
	if err != nil || k.MaxPositionNotional == nil || !k.MaxPositionNotional.Equal(limit) || k.MaxOrderNotional == nil {
		t.Fatalf("set maxPositionNotional: %v %+v", err, k.Guards)
	}
	if _, err := pool.Exec(ctx, `UPDATE api_keys SET max_position_notional = 0 WHERE id = $1`, keyID); err == nil {
		t.Fatal("the column takes a cap of 0")
	}
}
