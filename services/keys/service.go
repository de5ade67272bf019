package keys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/health"
)

// Service is the keys service. Its business methods work in-process (the
// standalone binary bootstraps through them); Start or Run also serve them
// on NATS and the admin API. Every error a business method returns is a
// *contract.Error or, for a fault, an error the boundary turns into
// INTERNAL_ERROR.
type Service struct {
	cfg      Config
	nc       *nats.Conn
	store    Store
	log      *slog.Logger
	now      func() time.Time
	seal     *sealer
	subjects contract.Subjects

	mu       sync.Mutex
	started  bool
	closed   bool
	lifetime context.Context // bounds NATS handlers; cancelled by Close
	cancel   context.CancelFunc
	micro    micro.Service
	// stopActivity ends the usage subscription and the audit consumer.
	stopActivity func()
	http         *http.Server
	listener     net.Listener
	served       chan struct{} // closed when the admin server stops serving
}

// New returns a Service on an existing NATS connection (owned by the
// caller, not closed by the Service; nil when only the business methods
// are used) and store (also owned by the caller). now is the clock; nil
// means time.Now. It fails when cfg is invalid.
func New(cfg Config, nc *nats.Conn, store Store, log *slog.Logger, now func() time.Time) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("keys config: %w", err)
	}
	if store == nil {
		return nil, errors.New("keys: store is nil")
	}
	master, _ := cfg.masterKey()
	seal, err := newSealer(master)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &Service{
		cfg: cfg, nc: nc, store: store, log: log, now: now, seal: seal,
		subjects: contract.NewSubjects(cfg.SubjectPrefix),
	}, nil
}

// clock returns the current time as stored: UTC, microsecond precision
// (what Postgres keeps), so every store returns exactly what it was given.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// CreateAccount creates an account of a tier. INVALID_REQUEST when the
// tier is unknown or the name too long.
func (s *Service) CreateAccount(ctx context.Context, tier contract.Tier, name string) (Account, error) {
	if !tier.Valid() {
		return Account{}, contract.Errorf(contract.CodeInvalidRequest, "tier must be one of free, builder, pro; got %q", truncate(string(tier)))
	}
	if len(name) > maxName {
		return Account{}, contract.Errorf(contract.CodeInvalidRequest, "name must be at most %d bytes", maxName)
	}
	a := Account{ID: newID(), Name: name, Tier: tier, CreatedAt: s.clock()}
	if err := s.store.CreateAccount(ctx, a); err != nil {
		return Account{}, fmt.Errorf("create account: %w", err)
	}
	s.log.InfoContext(ctx, "account created", "account_id", a.ID, "tier", a.Tier)
	return a, nil
}

// ListAccounts returns every account, oldest first.
func (s *Service) ListAccounts(ctx context.Context) ([]Account, error) {
	as, err := s.store.ListAccounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	return as, nil
}

// Account returns an account, or ACCOUNT_NOT_FOUND.
func (s *Service) Account(ctx context.Context, id string) (Account, error) {
	id, ok := canonicalID(id)
	if !ok {
		return Account{}, accountNotFound(id)
	}
	a, err := s.store.Account(ctx, id)
	if err != nil {
		return Account{}, s.storeError("get account", id, err)
	}
	return a, nil
}

// ListKeys lists an account's keys, revoked and expired ones included.
// ACCOUNT_NOT_FOUND when there is no such account.
func (s *Service) ListKeys(ctx context.Context, accountID string) ([]contract.KeyInfo, error) {
	id, ok := canonicalID(accountID)
	if !ok {
		return nil, accountNotFound(accountID)
	}
	ks, err := s.store.Keys(ctx, id)
	if err != nil {
		return nil, s.storeError("list keys", id, err)
	}
	return ks, nil
}

// RevokeKey revokes a key and publishes a KeyRevoked change event so edges
// drop it. Revoking a revoked key succeeds and keeps the first time.
// API_KEY_NOT_FOUND when there is no such key.
func (s *Service) RevokeKey(ctx context.Context, keyID string) (contract.KeyInfo, error) {
	id, ok := canonicalID(keyID)
	if !ok {
		return contract.KeyInfo{}, keyNotFound(keyID)
	}
	k, err := s.store.RevokeKey(ctx, id, s.clock())
	if err != nil {
		return contract.KeyInfo{}, s.storeError("revoke key", id, err)
	}
	s.log.InfoContext(ctx, "key revoked", "key_id", k.ID, "key_prefix", k.Display, "account_id", k.AccountID)
	s.publish(ctx, contract.ChangeEvent{Kind: contract.KeyRevoked, KeyID: k.ID, KeyHash: k.Hash})
	return k, nil
}

// UpdateKeyGuards applies a PATCH body to a key's guards (absent fields
// stay, null removes a limit) and publishes a KeyUpdated change event so
// edges reload the key. API_KEY_NOT_FOUND when there is no such key;
// INVALID_REQUEST naming the field when the body is wrong.
func (s *Service) UpdateKeyGuards(ctx context.Context, keyID string, patch map[string]json.RawMessage) (contract.KeyInfo, error) {
	id, ok := canonicalID(keyID)
	if !ok {
		return contract.KeyInfo{}, keyNotFound(keyID)
	}
	k, err := s.store.UpdateGuards(ctx, id, func(g contract.Guards) (contract.Guards, error) {
		ng, ce := contract.PatchGuards(g, patch)
		if ce != nil {
			return g, ce
		}
		return ng, nil
	})
	if ce, ok := contract.AsError(err); err != nil && ok {
		return contract.KeyInfo{}, ce
	}
	if err != nil {
		return contract.KeyInfo{}, s.storeError("update key guards", id, err)
	}
	s.log.InfoContext(ctx, "key guards changed", "key_id", k.ID, "key_prefix", k.Display, "account_id", k.AccountID)
	s.publish(ctx, contract.ChangeEvent{Kind: contract.KeyUpdated, KeyID: k.ID, KeyHash: k.Hash})
	return k, nil
}

// LookupKey returns the key with this SHA-256 hex with its account's tier,
// also when revoked or expired (the edge tells those apart).
// INVALID_API_KEY when no key has this hash.
func (s *Service) LookupKey(ctx context.Context, hash string) (contract.KeyInfo, error) {
	if !isHash(hash) {
		return contract.KeyInfo{}, contract.Errorf(contract.CodeInvalidAPIKey, "API key not recognized")
	}
	k, err := s.store.KeyByHash(ctx, hash)
	if errors.Is(err, ErrKeyNotFound) {
		return contract.KeyInfo{}, contract.Errorf(contract.CodeInvalidAPIKey, "API key not recognized")
	}
	if err != nil {
		return contract.KeyInfo{}, fmt.Errorf("look up key: %w", err)
	}
	return k, nil
}

// ListCredentials lists an account's credentials that are not deleted.
// ACCOUNT_NOT_FOUND when there is no such account.
func (s *Service) ListCredentials(ctx context.Context, accountID string) ([]contract.CredentialInfo, error) {
	id, ok := canonicalID(accountID)
	if !ok {
		return nil, accountNotFound(accountID)
	}
	cs, err := s.store.Credentials(ctx, id)
	if err != nil {
		return nil, s.storeError("list credentials", id, err)
	}
	out := make([]contract.CredentialInfo, len(cs))
	for i, c := range cs {
		out[i] = c.Info
	}
	return out, nil
}

// DeleteCredential soft-deletes a credential and publishes a
// CredentialDeleted change event. CREDENTIAL_NOT_FOUND when there is no
// such credential or it is already deleted.
func (s *Service) DeleteCredential(ctx context.Context, credentialID string) error {
	id, ok := canonicalID(credentialID)
	if !ok {
		return credentialNotFound(credentialID)
	}
	if err := s.store.DeleteCredential(ctx, id, s.clock()); err != nil {
		return s.storeError("delete credential", id, err)
	}
	s.log.InfoContext(ctx, "credential deleted", "credential_id", id)
	s.publish(ctx, contract.ChangeEvent{Kind: contract.CredentialDeleted, CredentialID: id})
	return nil
}

// LookupCredential returns a credential's metadata, never its secret.
// CREDENTIAL_NOT_FOUND when it does not exist or is deleted.
func (s *Service) LookupCredential(ctx context.Context, credentialID string) (contract.CredentialInfo, error) {
	id, ok := canonicalID(credentialID)
	if !ok {
		return contract.CredentialInfo{}, credentialNotFound(credentialID)
	}
	c, err := s.store.Credential(ctx, id)
	if err != nil {
		return contract.CredentialInfo{}, s.storeError("look up credential", id, err)
	}
	return c.Info, nil
}

// ReleaseSecret returns a credential with its decrypted secret, only when
// the credential belongs to exchange x. CREDENTIAL_NOT_FOUND when it does
// not exist, is deleted, or belongs to another exchange (never saying which).
func (s *Service) ReleaseSecret(ctx context.Context, x contract.Exchange, credentialID string) (contract.SecretResponse, error) {
	id, ok := canonicalID(credentialID)
	if !ok {
		return contract.SecretResponse{}, credentialNotFound(credentialID)
	}
	c, err := s.store.Credential(ctx, id)
	if err != nil {
		return contract.SecretResponse{}, s.storeError("release secret", id, err)
	}
	if c.Info.Exchange != x {
		s.log.WarnContext(ctx, "secret refused to another exchange", "credential_id", id, "exchange", x)
		return contract.SecretResponse{}, credentialNotFound(id)
	}
	plain, err := s.seal.open(id, c.Sealed)
	if err != nil {
		return contract.SecretResponse{}, fmt.Errorf("release secret: %w", err)
	}
	return contract.SecretResponse{Credential: c.Info, Secret: contract.Secret(plain)}, nil
}

// publish sends a change event and flushes it so it leaves at once. While
// NATS is down the client buffers the event and sends it on reconnect
// (edges also drop their caches when they reconnect); when it cannot even
// buffer it, the event is retried in the background until sent or the
// service closes. A failure is logged, not returned: the change is stored.
func (s *Service) publish(ctx context.Context, ev contract.ChangeEvent) {
	if s.nc == nil {
		return
	}
	data, err := json.Marshal(ev)
	if err != nil {
		s.log.ErrorContext(ctx, "encode change event", "kind", ev.Kind, "err", err)
		return
	}
	if err := s.nc.Publish(s.subjects.Events(), data); err != nil {
		s.log.WarnContext(ctx, "change event not sent; retrying", "kind", ev.Kind, "key_id", ev.KeyID, "credential_id", ev.CredentialID, "err", err)
		go s.retryPublish(ev, data)
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := s.nc.FlushWithContext(fctx); err != nil {
		s.log.WarnContext(ctx, "change event buffered until nats is back", "kind", ev.Kind, "key_id", ev.KeyID, "credential_id", ev.CredentialID, "err", err)
	}
}

// publishRetry is the pause between attempts to send a change event.
const publishRetry = 250 * time.Millisecond

func (s *Service) retryPublish(ev contract.ChangeEvent, data []byte) {
	s.mu.Lock()
	lifetime := s.lifetime
	s.mu.Unlock()
	if lifetime == nil {
		lifetime = context.Background()
	}
	t := time.NewTicker(publishRetry)
	defer t.Stop()
	for {
		select {
		case <-lifetime.Done():
			s.log.Error("change event lost at shutdown; edges expire the entry on their own", "kind", ev.Kind, "key_id", ev.KeyID, "credential_id", ev.CredentialID)
			return
		case <-t.C:
		}
		if s.nc.Publish(s.subjects.Events(), data) == nil {
			s.log.Info("change event sent after retry", "kind", ev.Kind, "key_id", ev.KeyID, "credential_id", ev.CredentialID)
			return
		}
	}
}

// storeError maps a store sentinel to its contract error and wraps any
// other error with the operation.
func (s *Service) storeError(op, id string, err error) error {
	switch {
	case errors.Is(err, ErrAccountNotFound):
		return accountNotFound(id)
	case errors.Is(err, ErrKeyNotFound):
		return keyNotFound(id)
	case errors.Is(err, ErrCredentialNotFound):
		return credentialNotFound(id)
	}
	return fmt.Errorf("%s %s: %w", op, id, err)
}

// Outage is SERVICE_UNAVAILABLE, naming the database, when err means the
// store did not answer (a store that can tell says so by implementing
// Unavailable), or naming the file, when its disk is full; nil for any
// other error.
func (s *Service) Outage(err error) *contract.Error {
	var ce *contract.Error
	st, ok := s.store.(interface{ Unavailable(error) bool })
	if path, full := health.DiskFullPath(err); full {
		ce = contract.Errorf(contract.CodeServiceUnavailable,
			"the disk holding %s is full, so nothing could be changed: free space on it; retry then", path)
	} else if ok && err != nil && st.Unavailable(err) {
		ce = contract.Errorf(contract.CodeServiceUnavailable,
			"the keys service's database (Postgres) is not answering, so nothing could be read or changed; retry shortly")
	} else {
		return nil
	}
	ce.RetryAfterSeconds = outageRetryAfter
	return ce
}

// outageRetryAfter is the Retry-After of an outage, in seconds: long
// enough for a restarting database, short enough not to idle clients.
const outageRetryAfter = 2

func accountNotFound(id string) *contract.Error {
	return contract.Errorf(contract.CodeAccountNotFound, "account %q not found", truncate(id))
}

func keyNotFound(id string) *contract.Error {
	return contract.Errorf(contract.CodeAPIKeyNotFound, "api key %q not found", truncate(id))
}

func credentialNotFound(id string) *contract.Error {
	return contract.Errorf(contract.CodeCredentialNotFound, "credential %q not found", truncate(id))
}

// newID returns a new time-ordered UUID.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// canonicalID returns id as a canonical lowercase UUID, or false.
func canonicalID(id string) (string, bool) {
	if len(id) != 36 {
		return id, false
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return id, false
	}
	return u.String(), true
}

// isHash reports whether h is a lowercase hex SHA-256.
func isHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// truncate keeps client-supplied text short in messages.
func truncate(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

const (
	maxName  = 200 // account name, bytes
	maxLabel = 200 // credential label, bytes
)
