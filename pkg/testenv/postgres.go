package testenv

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const postgresStart = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"

// Postgres creates a schema unique to the test in the test database
// (PERPGATE_TEST_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable) and returns a
// pool and a DSN whose search_path is that schema, so unqualified tables
// land in it. When the test ends the pool is closed and the schema dropped
// with everything in it. Anything else opened with the DSN must be closed
// first: register its cleanup after calling Postgres (cleanups run last
// registered first). It skips t (or fails it with
// PERPGATE_REQUIRE_SERVICES=1) when Postgres is unreachable.
func Postgres(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	base := env("PERPGATE_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()

	admin, err := pgx.Connect(ctx, withParam(base, "connect_timeout", "2"))
	if err != nil {
		unavailable(t, "Postgres", redact(base), err, postgresStart)
	}
	defer admin.Close(context.Background())

	schema := Prefix(t)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("testenv: create schema %s: %v", schema, err)
	}
	t.Cleanup(func() { dropSchema(t, base, schema) })

	dsn := withParam(base, "search_path", schema)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatalf("testenv: open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("testenv: ping pool: %v", err)
	}
	return pool, dsn
}

func dropSchema(t testing.TB, base, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Errorf("testenv: drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("testenv: drop schema %s: %v", schema, err)
	}
}

// withParam adds a connection parameter to a URL or keyword/value DSN,
// replacing one of the same name in a URL.
func withParam(dsn, key, value string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			q := u.Query()
			q.Set(key, value)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " " + key + "=" + value
}

// redact hides a password in a URL DSN for skip messages; a keyword/value
// DSN is not shown at all.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		return u.Redacted()
	}
	return "PERPGATE_TEST_DATABASE_URL"
}
