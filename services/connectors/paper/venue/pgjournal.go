package venue

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresJournal keeps the paper engine's journal (paper.Journal) in the
// venue's own schema of the deployment's Postgres, so that a restarted or
// rescheduled paper-venue comes back with every account, order and
// position. No other service reads the schema.
type PostgresJournal struct {
	pool    *pgxpool.Pool
	schema  string
	written atomic.Uint64 // records this journal committed: Write's position
}

// appendTimeout bounds one journal write.
const appendTimeout = 5 * time.Second

// OpenPostgresJournal connects, creates the schema and table when missing
// and returns the journal with the records it holds, oldest first.
func OpenPostgresJournal(ctx context.Context, url, schema string) (*PostgresJournal, [][]byte, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, nil, fmt.Errorf("paper journal: %w", err)
	}
	j := &PostgresJournal{pool: pool, schema: pgx.Identifier{schema}.Sanitize()}
	ddl := fmt.Sprintf(`CREATE SCHEMA IF NOT EXISTS %[1]s;
CREATE TABLE IF NOT EXISTS %[1]s.journal (seq bigserial PRIMARY KEY, record jsonb NOT NULL)`, j.schema)
	if _, err := pool.Exec(ctx, ddl); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("paper journal: create schema %s: %w", schema, err)
	}
	rows, err := pool.Query(ctx, fmt.Sprintf(`SELECT record::text FROM %s.journal ORDER BY seq`, j.schema))
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("paper journal: read: %w", err)
	}
	records, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]byte, error) {
		var s string
		err := r.Scan(&s)
		return []byte(s), err
	})
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("paper journal: read: %w", err)
	}
	return j, records, nil
}

// Write implements paper.Journal: the record is committed before it
// returns, under the engine's lock, so Sync has nothing left to do.
func (j *PostgresJournal) Write(record []byte) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), appendTimeout)
	defer cancel()
	_, err := j.pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.journal (record) VALUES ($1::text::jsonb)`, j.schema), string(record))
	if err != nil {
		return 0, err
	}
	return j.written.Add(1), nil
}

// Sync implements paper.Journal: every written record is already
// committed.
func (j *PostgresJournal) Sync(uint64) error { return nil }

// Ping reports whether Postgres answers, for readiness.
func (j *PostgresJournal) Ping(ctx context.Context) error { return j.pool.Ping(ctx) }

// Close closes the pool.
func (j *PostgresJournal) Close() { j.pool.Close() }
