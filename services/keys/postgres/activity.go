package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// KeyByID implements keys.Store.
func (s *Store) KeyByID(ctx context.Context, id string) (contract.KeyInfo, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, `SELECT `+keyColumns+`
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return contract.KeyInfo{}, keys.ErrKeyNotFound
	}
	if err != nil {
		return contract.KeyInfo{}, fmt.Errorf("select key: %w", err)
	}
	return k, nil
}

// AddUsage implements keys.Store in one batch; counts of keys that no
// longer exist are dropped.
func (s *Store) AddUsage(ctx context.Context, entries []contract.UsageEntry) error {
	b := &pgx.Batch{}
	for _, e := range entries {
		b.Queue(`INSERT INTO key_usage (key_id, day, operation, ok, failed)
			SELECT id, $2::date, $3, $4, $5 FROM api_keys WHERE id = $1::uuid
			ON CONFLICT (key_id, day, operation) DO UPDATE
			SET ok = key_usage.ok + EXCLUDED.ok, failed = key_usage.failed + EXCLUDED.failed`,
			e.KeyID, e.Day, e.Operation, e.OK, e.Failed)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("add usage: %w", err)
	}
	return nil
}

// Usage implements keys.Store.
func (s *Store) Usage(ctx context.Context, keyID, fromDay string) ([]contract.UsageEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT key_id::text, to_char(day, 'YYYY-MM-DD'), operation, ok, failed
		FROM key_usage WHERE key_id = $1 AND day >= $2::date ORDER BY day, operation`, keyID, fromDay)
	if err != nil {
		return nil, fmt.Errorf("select usage: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (contract.UsageEntry, error) {
		var e contract.UsageEntry
		err := r.Scan(&e.KeyID, &e.Day, &e.Operation, &e.OK, &e.Failed)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("select usage: %w", err)
	}
	return out, nil
}

// PutAudit implements keys.Store.
func (s *Store) PutAudit(ctx context.Context, e contract.AuditEntry) error {
	var params []byte
	if len(e.Params) > 0 {
		params = e.Params
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO audit_log (request_id, account_id, at, key_id, key_display,
			credential_id, exchange, operation, params, code, message, order_ids, duration_ms, via)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (request_id) DO UPDATE SET code = EXCLUDED.code, message = EXCLUDED.message,
			order_ids = EXCLUDED.order_ids, duration_ms = EXCLUDED.duration_ms, exchange = EXCLUDED.exchange,
			credential_id = EXCLUDED.credential_id, params = EXCLUDED.params
		WHERE EXCLUDED.code <> $15`,
		e.RequestID, e.AccountID, e.Time, e.KeyID, e.KeyDisplay, e.CredentialID, string(e.Exchange), e.Operation,
		params, e.Code, e.Message, nonNil(e.OrderIDs), e.DurationMs, e.Via, contract.AuditPending)
	if err != nil {
		return fmt.Errorf("insert audit entry: %w", err)
	}
	return nil
}

// pendingCode is the code q keeps only, "" for any.
func pendingCode(q keys.AuditQuery) string {
	if q.Pending {
		return contract.AuditPending
	}
	return ""
}

// Audit implements keys.Store.
func (s *Store) Audit(ctx context.Context, q keys.AuditQuery) ([]contract.AuditEntry, error) {
	page := `(at, request_id) > ($4, $5) ORDER BY at, request_id`
	if q.Newest {
		page = `(at, request_id) < ($4, $5) ORDER BY at DESC, request_id DESC`
	}
	rows, err := s.pool.Query(ctx, `SELECT request_id, account_id::text, at, key_id, key_display, credential_id,
			exchange, operation, params, code, message, order_ids, duration_ms, via
		FROM audit_log
		WHERE account_id = $1 AND at >= $2 AND at < $3 AND ($7 = '' OR code = $7) AND `+page+` LIMIT $6`,
		q.AccountID, q.Since, q.Until, q.AfterTime, q.AfterID, q.Limit, pendingCode(q))
	if err != nil {
		return nil, fmt.Errorf("select audit entries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (contract.AuditEntry, error) {
		var e contract.AuditEntry
		var x string
		var at time.Time
		err := r.Scan(&e.RequestID, &e.AccountID, &at, &e.KeyID, &e.KeyDisplay, &e.CredentialID, &x,
			&e.Operation, &e.Params, &e.Code, &e.Message, &e.OrderIDs, &e.DurationMs, &e.Via)
		e.Time, e.Exchange = at.UTC(), contract.Exchange(x)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("select audit entries: %w", err)
	}
	return out, nil
}
