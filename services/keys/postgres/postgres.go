// Package postgres is the production keys.Store on PostgreSQL (pgx/v5).
// Open applies the embedded, versioned migrations at start; the tables are
// accounts, api_keys (only the key's SHA-256 and 12-character display,
// never the key) and credentials (secrets sealed by the service, never in
// clear). All statements use unqualified names, so the store lives in the
// connection's search_path schema.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// SQLSTATE codes the store branches on.
const (
	sqlForeignKeyViolation = "23503"
)

// Store is a keys.Store on a pgx pool.
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool
}

var _ keys.Store = (*Store)(nil)

// Open connects to the database at dsn, applies pending migrations and
// returns the store; Close closes the pool.
func Open(ctx context.Context, dsn string) (*Store, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		// pgx's parse errors can quote the DSN, password included.
		return nil, errors.New("open postgres store: invalid PERPGATE_DATABASE_URL")
	}
	s, err := New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownPool = true
	return s, nil
}

// New uses an existing pool (left open by Close) and applies pending
// migrations.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	return s, nil
}

// Close closes the pool when Open created it.
// Ping reports whether Postgres answers (the keys service's readiness).
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

func (s *Store) Close() error {
	if s.ownPool {
		s.pool.Close()
	}
	return nil
}

// CreateAccount implements keys.Store.
func (s *Store) CreateAccount(ctx context.Context, a keys.Account) error {
	_, err := s.pool.Exec(ctx,
		`INSERT INTO accounts (id, name, tier, created_at) VALUES ($1, $2, $3, $4)`,
		a.ID, a.Name, string(a.Tier), a.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert account: %w", err)
	}
	return nil
}

// ListAccounts implements keys.Store.
func (s *Store) ListAccounts(ctx context.Context) ([]keys.Account, error) {
	rows, err := s.pool.Query(ctx, `SELECT id::text, name, tier, created_at FROM accounts ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("select accounts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (keys.Account, error) {
		var a keys.Account
		var tier string
		err := r.Scan(&a.ID, &a.Name, &tier, &a.CreatedAt)
		a.Tier, a.CreatedAt = contract.Tier(tier), a.CreatedAt.UTC()
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("select accounts: %w", err)
	}
	return out, nil
}

// Account implements keys.Store.
func (s *Store) Account(ctx context.Context, id string) (keys.Account, error) {
	var a keys.Account
	var tier string
	err := s.pool.QueryRow(ctx,
		`SELECT id::text, name, tier, created_at FROM accounts WHERE id = $1`, id).
		Scan(&a.ID, &a.Name, &tier, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return keys.Account{}, keys.ErrAccountNotFound
	}
	if err != nil {
		return keys.Account{}, fmt.Errorf("select account: %w", err)
	}
	a.Tier, a.CreatedAt = contract.Tier(tier), a.CreatedAt.UTC()
	return a, nil
}

// CreateKey implements keys.Store. The account row is locked FOR UPDATE
// in the same transaction as the count and the insert, so concurrent
// creations for one account take turns and the quota holds exactly.
func (s *Store) CreateKey(ctx context.Context, k contract.KeyInfo) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var tier string
		err := tx.QueryRow(ctx, `SELECT tier FROM accounts WHERE id = $1 FOR UPDATE`, k.AccountID).Scan(&tier)
		if errors.Is(err, pgx.ErrNoRows) {
			return keys.ErrAccountNotFound
		}
		if err != nil {
			return fmt.Errorf("lock account: %w", err)
		}
		var active int
		if err := tx.QueryRow(ctx,
			`SELECT count(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`, k.AccountID).
			Scan(&active); err != nil {
			return fmt.Errorf("count keys: %w", err)
		}
		if active >= contract.Tier(tier).Limits().MaxKeys {
			return keys.ErrKeyLimit
		}
		exchanges := make([]string, len(k.AllowedExchanges))
		for i, x := range k.AllowedExchanges {
			exchanges[i] = string(x)
		}
		_, err = tx.Exec(ctx, `INSERT INTO api_keys
			(id, account_id, key_hash, display, env, allowed_operations, allowed_exchanges,
			 allowed_credentials, expires_at, created_at,
			 read_only, allowed_markets, max_order_notional, max_daily_notional, max_leverage, max_position_notional)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8::uuid[], $9, $10, $11, $12, $13, $14, $15, $16)`,
			k.ID, k.AccountID, k.Hash, k.Display, string(k.Env),
			nonNil(k.AllowedOperations), exchanges, nonNil(k.AllowedCredentials),
			k.ExpiresAt, k.CreatedAt,
			k.ReadOnly, nonNil(k.AllowedMarkets), decimalArg(k.MaxOrderNotional), decimalArg(k.MaxDailyNotional), k.MaxLeverage,
			decimalArg(k.MaxPositionNotional))
		if err != nil {
			return fmt.Errorf("insert key: %w", err)
		}
		return nil
	})
}

const keyColumns = `k.id::text, k.account_id::text, k.key_hash, k.display, k.env, a.tier,
	k.allowed_operations, k.allowed_exchanges, k.allowed_credentials::text[],
	k.expires_at, k.revoked_at, k.created_at,
	k.read_only, k.allowed_markets, k.max_order_notional::text, k.max_daily_notional::text, k.max_leverage,
	k.max_position_notional::text`

func scanKey(row pgx.Row) (contract.KeyInfo, error) {
	var k contract.KeyInfo
	var env, tier string
	var exchanges []string
	var caps [3]*string
	err := row.Scan(&k.ID, &k.AccountID, &k.Hash, &k.Display, &env, &tier,
		&k.AllowedOperations, &exchanges, &k.AllowedCredentials,
		&k.ExpiresAt, &k.RevokedAt, &k.CreatedAt,
		&k.ReadOnly, &k.AllowedMarkets, &caps[0], &caps[1], &k.MaxLeverage, &caps[2])
	if err != nil {
		return contract.KeyInfo{}, err
	}
	for i, dst := range []**decimal.Decimal{&k.MaxOrderNotional, &k.MaxDailyNotional, &k.MaxPositionNotional} {
		if *dst, err = decimalOf(caps[i]); err != nil {
			return contract.KeyInfo{}, err
		}
	}
	if len(k.AllowedMarkets) == 0 {
		k.AllowedMarkets = nil
	}
	k.Env, k.Tier = contract.KeyEnv(env), contract.Tier(tier)
	k.AllowedOperations = nonNil(k.AllowedOperations)
	k.AllowedCredentials = nonNil(k.AllowedCredentials)
	k.AllowedExchanges = make([]contract.Exchange, len(exchanges))
	for i, x := range exchanges {
		k.AllowedExchanges[i] = contract.Exchange(x)
	}
	k.ExpiresAt, k.RevokedAt, k.CreatedAt = utcPtr(k.ExpiresAt), utcPtr(k.RevokedAt), k.CreatedAt.UTC()
	return k, nil
}

// Keys implements keys.Store.
func (s *Store) Keys(ctx context.Context, accountID string) ([]contract.KeyInfo, error) {
	if _, err := s.Account(ctx, accountID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+keyColumns+`
		FROM api_keys k JOIN accounts a ON a.id = k.account_id
		WHERE k.account_id = $1 ORDER BY k.created_at, k.id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("select keys: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (contract.KeyInfo, error) { return scanKey(r) })
	if err != nil {
		return nil, fmt.Errorf("select keys: %w", err)
	}
	return out, nil
}

// KeyByHash implements keys.Store.
func (s *Store) KeyByHash(ctx context.Context, hash string) (contract.KeyInfo, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, `SELECT `+keyColumns+`
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return contract.KeyInfo{}, keys.ErrKeyNotFound
	}
	if err != nil {
		return contract.KeyInfo{}, fmt.Errorf("select key by hash: %w", err)
	}
	return k, nil
}

// RevokeKey implements keys.Store.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) (contract.KeyInfo, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, `WITH k AS (
			UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING *)
		SELECT `+keyColumns+` FROM k JOIN accounts a ON a.id = k.account_id`, id, at))
	if errors.Is(err, pgx.ErrNoRows) {
		return contract.KeyInfo{}, keys.ErrKeyNotFound
	}
	if err != nil {
		return contract.KeyInfo{}, fmt.Errorf("revoke key: %w", err)
	}
	return k, nil
}

// UpdateGuards implements keys.Store: the key's row is locked while change
// runs, so concurrent patches apply one after the other.
func (s *Store) UpdateGuards(ctx context.Context, id string, change func(contract.Guards) (contract.Guards, error)) (contract.KeyInfo, error) {
	var out contract.KeyInfo
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		cur, err := scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+`
			FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = $1 FOR UPDATE OF k`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return keys.ErrKeyNotFound
		}
		if err != nil {
			return fmt.Errorf("select key: %w", err)
		}
		g, err := change(cur.Guards)
		if err != nil {
			return err
		}
		out, err = scanKey(tx.QueryRow(ctx, `WITH k AS (
				UPDATE api_keys SET read_only = $2, allowed_markets = $3, max_order_notional = $4,
					max_daily_notional = $5, max_leverage = $6, max_position_notional = $7 WHERE id = $1 RETURNING *)
			SELECT `+keyColumns+` FROM k JOIN accounts a ON a.id = k.account_id`,
			id, g.ReadOnly, nonNil(g.AllowedMarkets), decimalArg(g.MaxOrderNotional), decimalArg(g.MaxDailyNotional), g.MaxLeverage,
			decimalArg(g.MaxPositionNotional)))
		if err != nil {
			return fmt.Errorf("update key guards: %w", err)
		}
		return nil
	})
	return out, err
}

// decimalArg passes a cap to a numeric column as text, exactly; nil is NULL.
func decimalArg(d *decimal.Decimal) *string {
	if d == nil {
		return nil
	}
	s := d.String()
	return &s
}

func decimalOf(s *string) (*decimal.Decimal, error) {
	if s == nil {
		return nil, nil
	}
	d, err := decimal.NewFromString(*s)
	if err != nil {
		return nil, fmt.Errorf("stored notional cap %q: %w", *s, err)
	}
	return &d, nil
}

// CreateCredential implements keys.Store.
func (s *Store) CreateCredential(ctx context.Context, c keys.Credential) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO credentials
		(id, account_id, exchange, env, label, sealed, key_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.Info.ID, c.Info.AccountID, string(c.Info.Exchange), string(c.Info.Environment),
		c.Info.Label, c.Sealed.Data, c.Sealed.KeyID, c.Info.CreatedAt)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == sqlForeignKeyViolation {
		return keys.ErrAccountNotFound
	}
	if err != nil {
		return fmt.Errorf("insert credential: %w", err)
	}
	return nil
}

const credentialColumns = `id::text, account_id::text, exchange, env, label, sealed, key_id, deleted_at, created_at`

func scanCredential(row pgx.Row) (keys.Credential, error) {
	var c keys.Credential
	var exchange, env string
	err := row.Scan(&c.Info.ID, &c.Info.AccountID, &exchange, &env, &c.Info.Label,
		&c.Sealed.Data, &c.Sealed.KeyID, &c.DeletedAt, &c.Info.CreatedAt)
	if err != nil {
		return keys.Credential{}, err
	}
	c.Info.Exchange, c.Info.Environment = contract.Exchange(exchange), contract.Environment(env)
	c.Info.CreatedAt, c.DeletedAt = c.Info.CreatedAt.UTC(), utcPtr(c.DeletedAt)
	return c, nil
}

// Credentials implements keys.Store.
func (s *Store) Credentials(ctx context.Context, accountID string) ([]keys.Credential, error) {
	if _, err := s.Account(ctx, accountID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+credentialColumns+` FROM credentials
		WHERE account_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("select credentials: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (keys.Credential, error) { return scanCredential(r) })
	if err != nil {
		return nil, fmt.Errorf("select credentials: %w", err)
	}
	return out, nil
}

// Credential implements keys.Store.
func (s *Store) Credential(ctx context.Context, id string) (keys.Credential, error) {
	c, err := scanCredential(s.pool.QueryRow(ctx, `SELECT `+credentialColumns+` FROM credentials
		WHERE id = $1 AND deleted_at IS NULL`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return keys.Credential{}, keys.ErrCredentialNotFound
	}
	if err != nil {
		return keys.Credential{}, fmt.Errorf("select credential: %w", err)
	}
	return c, nil
}

// DeleteCredential implements keys.Store.
func (s *Store) DeleteCredential(ctx context.Context, id string, at time.Time) error {
	tag, err := s.pool.Exec(ctx,
		`UPDATE credentials SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL`, id, at)
	if err != nil {
		return fmt.Errorf("delete credential: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return keys.ErrCredentialNotFound
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
