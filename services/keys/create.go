package keys

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/perpgate/perpgate/pkg/apikey"
	"github.com/perpgate/perpgate/pkg/contract"
)

// KeyRequest describes a new API key. Empty scope lists mean no
// restriction. Scopes cannot be changed after creation.
type KeyRequest struct {
	Env                contract.KeyEnv     `json:"env"`
	AllowedOperations  []string            `json:"allowedOperations,omitempty"`
	AllowedExchanges   []contract.Exchange `json:"allowedExchanges,omitempty"`
	AllowedCredentials []string            `json:"allowedCredentials,omitempty"`
	ExpiresAt          *time.Time          `json:"expiresAt,omitempty"`
	contract.Guards
}

// NewKey is a freshly created API key: the full key, which exists nowhere
// else and is never shown again, and its stored metadata.
type NewKey struct {
	Key  apikey.Key
	Info contract.KeyInfo
}

// CredentialRequest describes a new exchange credential. Secret is the
// exchange's secret fields as a JSON object (DESIGN §5).
type CredentialRequest struct {
	Exchange contract.Exchange    `json:"exchange"`
	Env      contract.Environment `json:"env"`
	Label    string               `json:"label,omitempty"`
	Secret   json.RawMessage      `json:"secret"`
}

// CreateKey creates an API key for an account and returns the full key,
// exactly once. ACCOUNT_NOT_FOUND when the account does not exist;
// INVALID_REQUEST naming the bad value when the environment, a scope entry
// or the expiry is invalid; KEY_LIMIT_REACHED when the account already has
// its tier's number of non-revoked keys.
func (s *Service) CreateKey(ctx context.Context, accountID string, req KeyRequest) (NewKey, error) {
	acct, ok := canonicalID(accountID)
	if !ok {
		return NewKey{}, accountNotFound(accountID)
	}
	now := s.clock()
	if !req.Env.Valid() {
		return NewKey{}, contract.Errorf(contract.CodeInvalidRequest, `env must be "live" or "test", got %q`, truncate(string(req.Env)))
	}
	var expires *time.Time
	if req.ExpiresAt != nil {
		t := req.ExpiresAt.UTC().Truncate(time.Microsecond)
		if !t.After(now) {
			return NewKey{}, contract.Errorf(contract.CodeInvalidRequest, "expiresAt %s is not in the future", t.Format(time.RFC3339))
		}
		expires = &t
	}
	guards, ce := req.Guards.Normalize()
	if ce != nil {
		return NewKey{}, ce
	}
	ops, err := validOperations(req.AllowedOperations)
	if err != nil {
		return NewKey{}, err
	}
	exs, err := validExchanges(req.AllowedExchanges)
	if err != nil {
		return NewKey{}, err
	}
	account, err := s.store.Account(ctx, acct)
	if err != nil {
		return NewKey{}, s.storeError("create key", acct, err)
	}
	creds, err := s.validCredentials(ctx, acct, req.AllowedCredentials)
	if err != nil {
		return NewKey{}, err
	}

	key, err := apikey.Generate(apikey.Env(req.Env))
	if err != nil {
		return NewKey{}, fmt.Errorf("create key: %w", err)
	}
	info := contract.KeyInfo{
		ID: newID(), AccountID: acct, Hash: key.Hash(), Display: key.Display(), Env: req.Env,
		AllowedOperations: ops, AllowedExchanges: exs, AllowedCredentials: creds,
		ExpiresAt: expires, CreatedAt: now, Guards: guards,
	}
	if err := s.store.CreateKey(ctx, info); err != nil {
		if errors.Is(err, ErrKeyLimit) {
			return NewKey{}, contract.Errorf(contract.CodeKeyLimitReached,
				"account %s already has %d active keys, the limit of the %s tier; revoke one first",
				acct, account.Tier.Limits().MaxKeys, account.Tier)
		}
		return NewKey{}, s.storeError("create key", acct, err)
	}
	info.Tier = account.Tier
	s.log.InfoContext(ctx, "key created", "key_id", info.ID, "key_prefix", info.Display, "account_id", acct, "env", info.Env)
	return NewKey{Key: key, Info: info}, nil
}

// validOperations checks names against the operation table and drops
// repeats.
func validOperations(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := contract.Lookup(n); !ok {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "allowedOperations: %q is not an operation", truncate(n))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// validExchanges checks exchanges against the supported list and drops
// repeats.
func validExchanges(xs []contract.Exchange) ([]contract.Exchange, error) {
	out := make([]contract.Exchange, 0, len(xs))
	seen := map[contract.Exchange]bool{}
	for _, x := range xs {
		if !x.Valid() {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "allowedExchanges: %q is not a supported exchange", truncate(string(x)))
		}
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out, nil
}

// validCredentials checks that each id is a UUID of one of the account's
// credentials, and returns them canonical without repeats.
func (s *Service) validCredentials(ctx context.Context, accountID string, ids []string) ([]string, error) {
	out := make([]string, 0, len(ids))
	seen := map[string]bool{}
	for _, raw := range ids {
		id, ok := canonicalID(raw)
		if !ok {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "allowedCredentials: %q is not a UUID", truncate(raw))
		}
		if seen[id] {
			continue
		}
		c, err := s.store.Credential(ctx, id)
		if errors.Is(err, ErrCredentialNotFound) || (err == nil && c.Info.AccountID != accountID) {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "allowedCredentials: %q is not a credential of account %s", id, accountID)
		}
		if err != nil {
			return nil, fmt.Errorf("create key: check credential %s: %w", id, err)
		}
		seen[id] = true
		out = append(out, id)
	}
	return out, nil
}

// CreateCredential stores an exchange credential with its secret sealed.
// ACCOUNT_NOT_FOUND when the account does not exist; INVALID_REQUEST when
// the exchange, environment, label or secret shape is wrong (the message
// names the field, never a secret value). paper credentials are testnet
// only.
func (s *Service) CreateCredential(ctx context.Context, accountID string, req CredentialRequest) (contract.CredentialInfo, error) {
	acct, ok := canonicalID(accountID)
	if !ok {
		return contract.CredentialInfo{}, accountNotFound(accountID)
	}
	if !req.Exchange.Valid() {
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest, "exchange %q is not supported; use one of %v", truncate(string(req.Exchange)), contract.Exchanges)
	}
	if !req.Env.Valid() {
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest, `env must be "mainnet" or "testnet", got %q`, truncate(string(req.Env)))
	}
	if req.Exchange == contract.Paper && req.Env != contract.Testnet {
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest, `paper credentials must use env "testnet"`)
	}
	if len(req.Label) > maxLabel {
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest, "label must be at most %d bytes", maxLabel)
	}
	plain, cerr := validateSecret(req.Exchange, req.Secret)
	if cerr != nil {
		return contract.CredentialInfo{}, cerr
	}
	if req.Exchange == contract.Bybit && req.Env != contract.Testnet && bytes.Contains(plain, []byte(`"demo":true`)) {
		clear(plain)
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest,
			`a Bybit demo-trading key ("demo": true) works only on Bybit's demo host: create the credential with env "testnet"`)
	}
	if _, err := s.store.Account(ctx, acct); err != nil {
		return contract.CredentialInfo{}, s.storeError("create credential", acct, err)
	}
	info := contract.CredentialInfo{
		ID: newID(), AccountID: acct, Exchange: req.Exchange, Environment: req.Env,
		Label: req.Label, CreatedAt: s.clock(),
	}
	sealed, err := s.seal.seal(info.ID, plain)
	clear(plain)
	if err != nil {
		return contract.CredentialInfo{}, fmt.Errorf("create credential: %w", err)
	}
	if err := s.store.CreateCredential(ctx, Credential{Info: info, Sealed: sealed}); err != nil {
		return contract.CredentialInfo{}, s.storeError("create credential", acct, err)
	}
	s.log.InfoContext(ctx, "credential created", "credential_id", info.ID, "account_id", acct, "exchange", info.Exchange, "env", info.Environment)
	return info, nil
}
