package keys

import (
	"context"
	"errors"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

// Store errors. Implementations return them (possibly wrapped) so the
// Service can answer with the right contract code.
var (
	// ErrAccountNotFound means no account has the given id.
	ErrAccountNotFound = errors.New("account not found")
	// ErrKeyNotFound means no API key has the given id or hash.
	ErrKeyNotFound = errors.New("api key not found")
	// ErrCredentialNotFound means no live (non-deleted) credential has the given id.
	ErrCredentialNotFound = errors.New("credential not found")
	// ErrKeyLimit means the account already holds its tier's quota of
	// non-revoked keys.
	ErrKeyLimit = errors.New("key limit reached")
)

// Account is a customer account; its tier sets rate limits and key quota.
type Account struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	Tier      contract.Tier `json:"tier"`
	CreatedAt time.Time     `json:"createdAt"`
}

// AuditQuery selects a page of an account's audit entries.
type AuditQuery struct {
	AccountID    string
	Since, Until time.Time
	Limit        int
	// AfterTime and AfterID continue after the entry they name (before
	// it, newest first).
	AfterTime time.Time
	AfterID   string
	// Newest lists newest first.
	Newest bool
	// Pending keeps only the entries whose outcome is still PENDING (a
	// restart settles them): a few among a day's entries, so one query
	// reads the day once instead of a page at a time.
	Pending bool
}

// Sealed is a credential secret encrypted by the service: the id of the
// master key that sealed it and nonce||ciphertext||tag.
type Sealed struct {
	KeyID string
	Data  []byte
}

// Credential is a stored credential: its metadata, its sealed secret and,
// once deleted, when.
type Credential struct {
	Info      contract.CredentialInfo
	Sealed    Sealed
	DeletedAt *time.Time
}

// Store persists accounts, keys and credentials. Every method honours ctx.
// Ids are canonical lowercase UUID strings; the Service never passes
// anything else. Times are stored with at least microsecond precision and
// returned in UTC. Listings are ordered by creation time, then id.
type Store interface {
	// CreateAccount inserts a new account.
	CreateAccount(ctx context.Context, a Account) error
	// Account returns one account, or ErrAccountNotFound.
	Account(ctx context.Context, id string) (Account, error)
	// ListAccounts returns every account.
	ListAccounts(ctx context.Context) ([]Account, error)

	// CreateKey inserts a key for k.AccountID, atomically with checking the
	// quota: ErrKeyLimit when the account already has
	// Tier.Limits().MaxKeys non-revoked keys, ErrAccountNotFound when it
	// does not exist. k.Tier is ignored.
	CreateKey(ctx context.Context, k contract.KeyInfo) error
	// Keys lists an account's keys, revoked ones included, with Tier set;
	// ErrAccountNotFound when the account does not exist.
	Keys(ctx context.Context, accountID string) ([]contract.KeyInfo, error)
	// KeyByHash returns the key with this SHA-256 hex, revoked or expired
	// alike, with its account's Tier; ErrKeyNotFound when none.
	KeyByHash(ctx context.Context, hash string) (contract.KeyInfo, error)
	// RevokeKey marks a key revoked at `at` and returns it. Revoking a
	// revoked key keeps the first time. ErrKeyNotFound when none.
	RevokeKey(ctx context.Context, id string, at time.Time) (contract.KeyInfo, error)
	// UpdateGuards replaces a key's guards with what change makes of them,
	// atomically, and returns the key; ErrKeyNotFound when none. An error
	// from change leaves the key as it was and is returned.
	UpdateGuards(ctx context.Context, id string, change func(contract.Guards) (contract.Guards, error)) (contract.KeyInfo, error)

	// KeyByID returns a key with its account's Tier; ErrKeyNotFound when none.
	KeyByID(ctx context.Context, id string) (contract.KeyInfo, error)

	// AddUsage adds request counts to the stored ones, per (key, day,
	// operation).
	AddUsage(ctx context.Context, entries []contract.UsageEntry) error
	// Usage returns a key's counts of the days from fromDay (YYYY-MM-DD)
	// on, by day then operation.
	Usage(ctx context.Context, keyID, fromDay string) ([]contract.UsageEntry, error)
	// PutAudit stores an audit entry; an entry with the same request id is
	// replaced, except that a PENDING entry never replaces a final one.
	PutAudit(ctx context.Context, e contract.AuditEntry) error
	// Audit lists an account's audit entries with since <= time < until,
	// oldest first, at most limit, starting after the cursor (the time and
	// request id of the last entry of the previous page; zero to start).
	Audit(ctx context.Context, q AuditQuery) ([]contract.AuditEntry, error)

	// CreateCredential inserts a credential; ErrAccountNotFound when its
	// account does not exist.
	CreateCredential(ctx context.Context, c Credential) error
	// Credentials lists an account's credentials that are not deleted;
	// ErrAccountNotFound when the account does not exist.
	Credentials(ctx context.Context, accountID string) ([]Credential, error)
	// Credential returns a credential that is not deleted, or
	// ErrCredentialNotFound.
	Credential(ctx context.Context, id string) (Credential, error)
	// DeleteCredential soft-deletes a credential at `at`;
	// ErrCredentialNotFound when it does not exist or is already deleted.
	DeleteCredential(ctx context.Context, id string, at time.Time) error

	// Close releases the store's resources.
	Close() error
}
