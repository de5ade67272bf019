// Package filestore is a keys.Store kept in one JSON file, for the
// standalone gateway (DESIGN §9): no database to run, state survives
// restarts. Every change rewrites the file atomically (temporary file,
// fsync, rename) with mode 0600 in a 0700 directory, under a mutex. It
// serves one process: two processes must not share a data directory.
package filestore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// FileName is the state file inside the data directory.
const FileName = "keys.json"

// formatVersion is written into the file and checked on load.
const formatVersion = 1

// Store is a keys.Store in a JSON file.
type Store struct {
	path string

	mu    sync.Mutex
	state state

	// auditMu guards the audit log, apart from the state; it is held
	// only to append, to seal and to look up, never while a file is read.
	auditMu sync.Mutex
	// auditIndex caches the sealed audit segments' indexes.
	auditIndex map[string]segmentIndex
	auditLog   *appendlog.File // opened by the first PutAudit
	// live indexes the entries appended to the log since this store began
	// it, so that sealing it needs no read of it.
	live liveIndex
	// auditSegBytes is the size at which an append seals the log; the
	// retention sets it (PruneAudit).
	auditSegBytes int64
	// indexing counts the segments being indexed in the background;
	// stopIndexing ends them at Close.
	indexing     sync.WaitGroup
	stopIndexing chan struct{}
	// The audit syncer (AppendAudit): the latest entry written and
	// whether the syncer runs; syncIdle counts it.
	syncMu   sync.Mutex
	syncLog  *appendlog.File
	syncPos  uint64
	syncing  bool
	syncIdle sync.WaitGroup
}

var _ keys.Store = (*Store)(nil)

// state is the file's content and the in-memory model.
type state struct {
	Version     int                   `json:"version"`
	Accounts    []account             `json:"accounts"`
	Keys        []apiKey              `json:"apiKeys"`
	Credentials []credential          `json:"credentials"`
	Usage       []contract.UsageEntry `json:"usage,omitempty"`
}

type account struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	Tier      contract.Tier `json:"tier"`
	CreatedAt time.Time     `json:"createdAt"`
}

// apiKey holds only the key's SHA-256 and display, never the key.
type apiKey struct {
	ID                 string              `json:"id"`
	AccountID          string              `json:"accountId"`
	KeyHash            string              `json:"keyHash"`
	Display            string              `json:"display"`
	Env                contract.KeyEnv     `json:"env"`
	AllowedOperations  []string            `json:"allowedOperations"`
	AllowedExchanges   []contract.Exchange `json:"allowedExchanges"`
	AllowedCredentials []string            `json:"allowedCredentials"`
	ExpiresAt          *time.Time          `json:"expiresAt,omitempty"`
	RevokedAt          *time.Time          `json:"revokedAt,omitempty"`
	CreatedAt          time.Time           `json:"createdAt"`
	contract.Guards
}

// credential holds the sealed secret only.
type credential struct {
	ID        string               `json:"id"`
	AccountID string               `json:"accountId"`
	Exchange  contract.Exchange    `json:"exchange"`
	Env       contract.Environment `json:"env"`
	Label     string               `json:"label"`
	Sealed    []byte               `json:"sealed"`
	KeyID     string               `json:"keyId"`
	DeletedAt *time.Time           `json:"deletedAt,omitempty"`
	CreatedAt time.Time            `json:"createdAt"`
}

// Open loads (or creates) the store in dir, creating dir with mode 0700.
// It fails when the file exists but cannot be read or parsed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open file store: %w", err)
	}
	s := &Store{path: filepath.Join(dir, FileName), state: state{Version: formatVersion}, auditIndex: map[string]segmentIndex{},
		live: newLiveIndex(), auditSegBytes: segmentBytes(keys.DefaultAuditRetention().MaxBytes), stopIndexing: make(chan struct{})}
	data, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("open file store: %w", err)
	default:
		if err := json.Unmarshal(data, &s.state); err != nil {
			return nil, fmt.Errorf("open file store %s: %w", s.path, err)
		}
		if s.state.Version != formatVersion {
			return nil, fmt.Errorf("open file store %s: unsupported format version %d", s.path, s.state.Version)
		}
	}
	if err := s.sealLeftoverAudit(); err != nil {
		return nil, fmt.Errorf("open file store: %w", err)
	}
	return s, nil
}

// Path returns the state file's path.
func (s *Store) Path() string { return s.path }

// Close waits for the audit syncer, stops the background indexing and
// closes the audit log; the state file is complete after every change.
func (s *Store) Close() error {
	s.syncIdle.Wait()
	s.auditMu.Lock()
	select {
	case <-s.stopIndexing:
	default:
		close(s.stopIndexing) // under auditMu: indexLater starts no more
	}
	s.auditMu.Unlock()
	s.indexing.Wait()
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	if s.auditLog == nil {
		return nil
	}
	return s.auditLog.Close()
}

// update applies change to the state and persists it; on any failure the
// in-memory state is left as it was.
func (s *Store) update(ctx context.Context, change func(st *state) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.state.clone()
	if err := change(&next); err != nil {
		return err
	}
	if err := s.write(next); err != nil {
		return err
	}
	s.state = next
	return nil
}

// view runs read under the lock.
func (s *Store) view(ctx context.Context, read func(st *state) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return read(&s.state)
}

// write replaces the file atomically: a reader (or a crash) sees the old
// content or the new, never a mix.
func (s *Store) write(st state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("write file store: %w", err)
	}
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, "."+FileName+".*.tmp") // created 0600
	if err != nil {
		return fmt.Errorf("write file store: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write file store: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write file store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write file store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write file store: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("write file store: %w", err)
	}
	// Persist the rename itself.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// clone copies the slices that changes modify; records are values, and
// their inner slices are never modified in place.
func (st state) clone() state {
	return state{
		Version:     st.Version,
		Accounts:    slices.Clone(st.Accounts),
		Keys:        slices.Clone(st.Keys),
		Credentials: slices.Clone(st.Credentials),
		Usage:       st.Usage, // AddUsage clones it before changing it
	}
}

func (st *state) account(id string) (int, bool) {
	i := slices.IndexFunc(st.Accounts, func(a account) bool { return a.ID == id })
	return i, i >= 0
}

// CreateAccount implements keys.Store.
func (s *Store) CreateAccount(ctx context.Context, a keys.Account) error {
	return s.update(ctx, func(st *state) error {
		if _, ok := st.account(a.ID); ok {
			return fmt.Errorf("create account %s: id already exists", a.ID)
		}
		st.Accounts = append(st.Accounts, account{ID: a.ID, Name: a.Name, Tier: a.Tier, CreatedAt: a.CreatedAt.UTC()})
		return nil
	})
}

// ListAccounts implements keys.Store.
func (s *Store) ListAccounts(ctx context.Context) ([]keys.Account, error) {
	var out []keys.Account
	err := s.view(ctx, func(st *state) error {
		for _, a := range st.Accounts {
			out = append(out, keys.Account{ID: a.ID, Name: a.Name, Tier: a.Tier, CreatedAt: a.CreatedAt})
		}
		return nil
	})
	slices.SortStableFunc(out, func(a, b keys.Account) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

// Account implements keys.Store.
func (s *Store) Account(ctx context.Context, id string) (keys.Account, error) {
	var out keys.Account
	err := s.view(ctx, func(st *state) error {
		i, ok := st.account(id)
		if !ok {
			return keys.ErrAccountNotFound
		}
		a := st.Accounts[i]
		out = keys.Account{ID: a.ID, Name: a.Name, Tier: a.Tier, CreatedAt: a.CreatedAt}
		return nil
	})
	return out, err
}

// CreateKey implements keys.Store; the quota check and the insert happen
// under one lock.
func (s *Store) CreateKey(ctx context.Context, k contract.KeyInfo) error {
	return s.update(ctx, func(st *state) error {
		i, ok := st.account(k.AccountID)
		if !ok {
			return keys.ErrAccountNotFound
		}
		active := 0
		for _, x := range st.Keys {
			if x.KeyHash == k.Hash {
				return fmt.Errorf("create key %s: hash already exists", k.ID)
			}
			if x.AccountID == k.AccountID && x.RevokedAt == nil {
				active++
			}
		}
		if active >= st.Accounts[i].Tier.Limits().MaxKeys {
			return keys.ErrKeyLimit
		}
		st.Keys = append(st.Keys, apiKey{
			ID: k.ID, AccountID: k.AccountID, KeyHash: k.Hash, Display: k.Display, Env: k.Env,
			AllowedOperations:  nonNil(k.AllowedOperations),
			AllowedExchanges:   nonNil(k.AllowedExchanges),
			AllowedCredentials: nonNil(k.AllowedCredentials),
			ExpiresAt:          utcPtr(k.ExpiresAt), CreatedAt: k.CreatedAt.UTC(),
			Guards: cloneGuards(k.Guards),
		})
		return nil
	})
}

func (st *state) keyInfo(k apiKey) contract.KeyInfo {
	var tier contract.Tier
	if i, ok := st.account(k.AccountID); ok {
		tier = st.Accounts[i].Tier
	}
	return contract.KeyInfo{
		ID: k.ID, AccountID: k.AccountID, Hash: k.KeyHash, Display: k.Display, Env: k.Env, Tier: tier,
		AllowedOperations:  slices.Clone(nonNil(k.AllowedOperations)),
		AllowedExchanges:   slices.Clone(nonNil(k.AllowedExchanges)),
		AllowedCredentials: slices.Clone(nonNil(k.AllowedCredentials)),
		ExpiresAt:          utcPtr(k.ExpiresAt), RevokedAt: utcPtr(k.RevokedAt), CreatedAt: k.CreatedAt,
		Guards: cloneGuards(k.Guards),
	}
}

// cloneGuards copies g so callers never share the store's slices or caps.
func cloneGuards(g contract.Guards) contract.Guards {
	g.AllowedMarkets = slices.Clone(g.AllowedMarkets)
	if len(g.AllowedMarkets) == 0 {
		g.AllowedMarkets = nil
	}
	for _, c := range []**decimal.Decimal{&g.MaxOrderNotional, &g.MaxDailyNotional, &g.MaxPositionNotional} {
		if *c != nil {
			d := **c
			*c = &d
		}
	}
	return g
}

// UpdateGuards implements keys.Store.
func (s *Store) UpdateGuards(ctx context.Context, id string, change func(contract.Guards) (contract.Guards, error)) (contract.KeyInfo, error) {
	var out contract.KeyInfo
	err := s.update(ctx, func(st *state) error {
		i := slices.IndexFunc(st.Keys, func(k apiKey) bool { return k.ID == id })
		if i < 0 {
			return keys.ErrKeyNotFound
		}
		g, err := change(cloneGuards(st.Keys[i].Guards))
		if err != nil {
			return err
		}
		st.Keys[i].Guards = cloneGuards(g)
		out = st.keyInfo(st.Keys[i])
		return nil
	})
	return out, err
}

// Keys implements keys.Store.
func (s *Store) Keys(ctx context.Context, accountID string) ([]contract.KeyInfo, error) {
	var out []contract.KeyInfo
	err := s.view(ctx, func(st *state) error {
		if _, ok := st.account(accountID); !ok {
			return keys.ErrAccountNotFound
		}
		out = []contract.KeyInfo{}
		for _, k := range st.Keys {
			if k.AccountID == accountID {
				out = append(out, st.keyInfo(k))
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b contract.KeyInfo) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, err
}

// KeyByHash implements keys.Store.
func (s *Store) KeyByHash(ctx context.Context, hash string) (contract.KeyInfo, error) {
	var out contract.KeyInfo
	err := s.view(ctx, func(st *state) error {
		for _, k := range st.Keys {
			if k.KeyHash == hash {
				out = st.keyInfo(k)
				return nil
			}
		}
		return keys.ErrKeyNotFound
	})
	return out, err
}

// RevokeKey implements keys.Store.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) (contract.KeyInfo, error) {
	var out contract.KeyInfo
	err := s.update(ctx, func(st *state) error {
		i := slices.IndexFunc(st.Keys, func(k apiKey) bool { return k.ID == id })
		if i < 0 {
			return keys.ErrKeyNotFound
		}
		if st.Keys[i].RevokedAt == nil {
			t := at.UTC()
			st.Keys[i].RevokedAt = &t
		}
		out = st.keyInfo(st.Keys[i])
		return nil
	})
	return out, err
}

// CreateCredential implements keys.Store.
func (s *Store) CreateCredential(ctx context.Context, c keys.Credential) error {
	return s.update(ctx, func(st *state) error {
		if _, ok := st.account(c.Info.AccountID); !ok {
			return keys.ErrAccountNotFound
		}
		if slices.ContainsFunc(st.Credentials, func(x credential) bool { return x.ID == c.Info.ID }) {
			return fmt.Errorf("create credential %s: id already exists", c.Info.ID)
		}
		st.Credentials = append(st.Credentials, credential{
			ID: c.Info.ID, AccountID: c.Info.AccountID, Exchange: c.Info.Exchange, Env: c.Info.Environment,
			Label: c.Info.Label, Sealed: slices.Clone(c.Sealed.Data), KeyID: c.Sealed.KeyID,
			CreatedAt: c.Info.CreatedAt.UTC(),
		})
		return nil
	})
}

func toCredential(c credential) keys.Credential {
	return keys.Credential{
		Info: contract.CredentialInfo{
			ID: c.ID, AccountID: c.AccountID, Exchange: c.Exchange, Environment: c.Env,
			Label: c.Label, CreatedAt: c.CreatedAt,
		},
		Sealed:    keys.Sealed{KeyID: c.KeyID, Data: slices.Clone(c.Sealed)},
		DeletedAt: utcPtr(c.DeletedAt),
	}
}

// Credentials implements keys.Store.
func (s *Store) Credentials(ctx context.Context, accountID string) ([]keys.Credential, error) {
	var out []keys.Credential
	err := s.view(ctx, func(st *state) error {
		if _, ok := st.account(accountID); !ok {
			return keys.ErrAccountNotFound
		}
		out = []keys.Credential{}
		for _, c := range st.Credentials {
			if c.AccountID == accountID && c.DeletedAt == nil {
				out = append(out, toCredential(c))
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b keys.Credential) int {
		return cmp.Or(a.Info.CreatedAt.Compare(b.Info.CreatedAt), cmp.Compare(a.Info.ID, b.Info.ID))
	})
	return out, err
}

// Credential implements keys.Store.
func (s *Store) Credential(ctx context.Context, id string) (keys.Credential, error) {
	var out keys.Credential
	err := s.view(ctx, func(st *state) error {
		for _, c := range st.Credentials {
			if c.ID == id && c.DeletedAt == nil {
				out = toCredential(c)
				return nil
			}
		}
		return keys.ErrCredentialNotFound
	})
	return out, err
}

// DeleteCredential implements keys.Store.
func (s *Store) DeleteCredential(ctx context.Context, id string, at time.Time) error {
	return s.update(ctx, func(st *state) error {
		i := slices.IndexFunc(st.Credentials, func(c credential) bool { return c.ID == id && c.DeletedAt == nil })
		if i < 0 {
			return keys.ErrCredentialNotFound
		}
		t := at.UTC()
		st.Credentials[i].DeletedAt = &t
		return nil
	})
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

// daysBetween is the number of days from a to b (YYYY-MM-DD); 0 when either
// does not parse.
func daysBetween(a, b string) int {
	ta, err1 := time.Parse(time.DateOnly, a)
	tb, err2 := time.Parse(time.DateOnly, b)
	if err1 != nil || err2 != nil {
		return 0
	}
	return int(tb.Sub(ta).Hours() / 24)
}
