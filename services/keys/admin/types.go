package admin

import (
	"context"
	"encoding/json"
	"time"

	"github.com/perpgate/perpgate/pkg/apikey"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Backend is what the admin API administers: the keys service's business
// methods. Errors are *contract.Error for client mistakes; anything else is
// answered INTERNAL_ERROR and logged.
type Backend interface {
	CreateAccount(ctx context.Context, tier contract.Tier, name string) (Account, error)
	ListAccounts(ctx context.Context) ([]Account, error)
	CreateKey(ctx context.Context, accountID string, req KeyRequest) (NewKey, error)
	ListKeys(ctx context.Context, accountID string) ([]contract.KeyInfo, error)
	RevokeKey(ctx context.Context, keyID string) (contract.KeyInfo, error)
	UpdateKeyGuards(ctx context.Context, keyID string, patch map[string]json.RawMessage) (contract.KeyInfo, error)
	HaltKey(ctx context.Context, keyID string, req contract.HaltRequest) (contract.HaltResult, error)
	KeyUsage(ctx context.Context, keyID string, days int) ([]contract.UsageDay, error)
	AuditLog(ctx context.Context, accountID string, since, until time.Time, limit int, cursor string, newest bool) (contract.AuditPage, error)
	CreateCredential(ctx context.Context, accountID string, req CredentialRequest) (contract.CredentialInfo, error)
	ListCredentials(ctx context.Context, accountID string) ([]contract.CredentialInfo, error)
	DeleteCredential(ctx context.Context, credentialID string) error
}

// Account is an account as the admin API shows it.
type Account struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	Tier      contract.Tier `json:"tier"`
	CreatedAt time.Time     `json:"createdAt"`
}

// KeyRequest is the body of POST /admin/v1/accounts/{id}/keys. Empty scope
// lists mean no restriction; ExpiresAt travels as RFC 3339.
type KeyRequest struct {
	Env                contract.KeyEnv     `json:"env"`
	AllowedOperations  []string            `json:"allowedOperations,omitempty"`
	AllowedExchanges   []contract.Exchange `json:"allowedExchanges,omitempty"`
	AllowedCredentials []string            `json:"allowedCredentials,omitempty"`
	ExpiresAt          *time.Time          `json:"expiresAt,omitempty"`
	contract.Guards
}

// NewKey is a created key: the full key (shown once) and its metadata.
type NewKey struct {
	Key  apikey.Key
	Info contract.KeyInfo
}

// CredentialRequest is the body of POST /admin/v1/accounts/{id}/credentials.
type CredentialRequest struct {
	Exchange contract.Exchange    `json:"exchange"`
	Env      contract.Environment `json:"env"`
	Label    string               `json:"label,omitempty"`
	Secret   json.RawMessage      `json:"secret"`
}

// KeyView is an API key as the admin API shows it: never the key (except
// once in CreatedKeyResponse) and never its hash. Empty scope lists mean
// no restriction.
type KeyView struct {
	ID                 string              `json:"id"`
	AccountID          string              `json:"accountId"`
	Display            string              `json:"display"`
	Env                contract.KeyEnv     `json:"env"`
	Tier               contract.Tier       `json:"tier,omitempty"`
	AllowedOperations  []string            `json:"allowedOperations"`
	AllowedExchanges   []contract.Exchange `json:"allowedExchanges"`
	AllowedCredentials []string            `json:"allowedCredentials"`
	ExpiresAt          *time.Time          `json:"expiresAt"`
	RevokedAt          *time.Time          `json:"revokedAt"`
	CreatedAt          time.Time           `json:"createdAt"`
	GuardsView
}

// GuardsView shows every guard of a key, null where there is no limit.
type GuardsView struct {
	ReadOnly         bool             `json:"readOnly"`
	AllowedMarkets   []string         `json:"allowedMarkets"`
	MaxOrderNotional *decimal.Decimal `json:"maxOrderNotional"`
	MaxDailyNotional *decimal.Decimal `json:"maxDailyNotional"`
	MaxLeverage      *int             `json:"maxLeverage"`
	// MaxPositionNotional caps a market's position plus same-side resting
	// orders (DESIGN §13).
	MaxPositionNotional *decimal.Decimal `json:"maxPositionNotional"`
}

// ViewOf returns the admin view of a key.
func ViewOf(k contract.KeyInfo) KeyView {
	v := KeyView{
		ID: k.ID, AccountID: k.AccountID, Display: k.Display, Env: k.Env, Tier: k.Tier,
		AllowedOperations:  k.AllowedOperations,
		AllowedExchanges:   k.AllowedExchanges,
		AllowedCredentials: k.AllowedCredentials,
		ExpiresAt:          k.ExpiresAt, RevokedAt: k.RevokedAt, CreatedAt: k.CreatedAt,
		GuardsView: GuardsView{ReadOnly: k.ReadOnly, AllowedMarkets: k.AllowedMarkets,
			MaxOrderNotional: k.MaxOrderNotional, MaxDailyNotional: k.MaxDailyNotional,
			MaxPositionNotional: k.MaxPositionNotional},
	}
	if k.MaxLeverage > 0 {
		lev := k.MaxLeverage
		v.MaxLeverage = &lev
	}
	if v.AllowedMarkets == nil {
		v.AllowedMarkets = []string{}
	}
	if v.AllowedOperations == nil {
		v.AllowedOperations = []string{}
	}
	if v.AllowedExchanges == nil {
		v.AllowedExchanges = []contract.Exchange{}
	}
	if v.AllowedCredentials == nil {
		v.AllowedCredentials = []string{}
	}
	return v
}

// AccountResponse answers POST /admin/v1/accounts (201).
type AccountResponse struct {
	Success bool `json:"success"`
	Account
}

// AccountsResponse answers GET /admin/v1/accounts, oldest first.
type AccountsResponse struct {
	Success  bool      `json:"success"`
	Accounts []Account `json:"accounts"`
}

// CreatedKeyResponse answers POST /admin/v1/accounts/{id}/keys (201). Key
// is the full API key, returned only here.
type CreatedKeyResponse struct {
	Success bool   `json:"success"`
	Key     string `json:"key"`
	KeyView
}

// KeysResponse answers GET /admin/v1/accounts/{id}/keys.
type KeysResponse struct {
	Success bool      `json:"success"`
	Keys    []KeyView `json:"keys"`
}

// UsageResponse answers GET /admin/v1/keys/{id}/usage: one entry per UTC
// day, oldest first, today last.
type UsageResponse struct {
	Success bool                `json:"success"`
	KeyID   string              `json:"keyId"`
	Days    []contract.UsageDay `json:"days"`
}

// AuditResponse answers GET /admin/v1/accounts/{id}/audit.
type AuditResponse struct {
	Success bool `json:"success"`
	contract.AuditPage
}

// KeyResponse answers POST /admin/v1/keys/{id}/revoke and PATCH /admin/v1/keys/{id}.
type KeyResponse struct {
	Success bool `json:"success"`
	KeyView
}

// HaltResponse answers POST /admin/v1/keys/{id}/halt.
type HaltResponse struct {
	Success bool `json:"success"`
	contract.HaltResult
}

// CredentialResponse answers POST /admin/v1/accounts/{id}/credentials (201).
type CredentialResponse struct {
	Success bool `json:"success"`
	contract.CredentialInfo
}

// CredentialsResponse answers GET /admin/v1/accounts/{id}/credentials.
type CredentialsResponse struct {
	Success     bool                      `json:"success"`
	Credentials []contract.CredentialInfo `json:"credentials"`
}

// DeletedResponse answers DELETE /admin/v1/credentials/{id}.
type DeletedResponse struct {
	Success      bool   `json:"success"`
	CredentialID string `json:"credentialId"`
	Deleted      bool   `json:"deleted"`
}

// errorResponse is the error envelope.
type errorResponse struct {
	Success bool `json:"success"`
	*contract.Error
}
