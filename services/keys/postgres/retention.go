package postgres

import (
	"context"
	"fmt"
	"time"
)

// PruneAudit implements keys.AuditPruner: it deletes the entries older
// than before, then, while the entries take more than maxBytes (their
// row size, without indexes or space Postgres has not reused yet), the
// oldest until they take nine tenths of it.
func (s *Store) PruneAudit(ctx context.Context, before time.Time, maxBytes int64) (int64, error) {
	var rows, bytes int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(pg_column_size(a.*)), 0) FROM audit_log a WHERE at < $1`,
		before).Scan(&rows, &bytes); err != nil {
		return 0, fmt.Errorf("audit retention: %w", err)
	}
	dropped := bytes
	if rows > 0 {
		if _, err := s.pool.Exec(ctx, `DELETE FROM audit_log WHERE at < $1`, before); err != nil {
			return 0, fmt.Errorf("audit retention: %w", err)
		}
	}
	if err := s.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(pg_column_size(a.*)), 0) FROM audit_log a`).Scan(&rows, &bytes); err != nil {
		return dropped, fmt.Errorf("audit retention: %w", err)
	}
	if bytes <= maxBytes || rows == 0 {
		return dropped, nil
	}
	// Rows are about the same size: drop the oldest share that is too much.
	n := rows - rows*(maxBytes*9/10)/bytes
	tag, err := s.pool.Exec(ctx, `DELETE FROM audit_log WHERE request_id IN
		(SELECT request_id FROM audit_log ORDER BY at, request_id LIMIT $1)`, n)
	if err != nil {
		return dropped, fmt.Errorf("audit retention: %w", err)
	}
	return dropped + bytes*tag.RowsAffected()/rows, nil
}
