package contract

import (
	"time"

	"github.com/shopspring/decimal"
)

// Tier is an account's plan; it sets rate limits, key quota and which
// operations a key may call.
type Tier string

// Tiers (SPEC §5).
const (
	TierFree    Tier = "free"
	TierBuilder Tier = "builder"
	TierPro     Tier = "pro"
)

var tierRank = map[Tier]int{TierFree: 0, TierBuilder: 1, TierPro: 2}

// Valid reports whether t is a known tier.
func (t Tier) Valid() bool { _, ok := tierRank[t]; return ok }

// AtLeast reports whether t is min or higher.
func (t Tier) AtLeast(min Tier) bool { return t.Valid() && tierRank[t] >= tierRank[min] }

// TierLimits are the per-tier figures of SPEC §8.
type TierLimits struct {
	PerMinute int
	PerDay    int
	MaxKeys   int
	// MaxStreams caps the long-lived connections one key holds open: MCP
	// SSE sessions and account event streams (DESIGN §13).
	MaxStreams int
}

// Limits returns the rate limits, key quota and stream cap of a tier.
func (t Tier) Limits() TierLimits {
	switch t {
	case TierPro:
		return TierLimits{PerMinute: 600, PerDay: 500_000, MaxKeys: 25, MaxStreams: 50}
	case TierBuilder:
		return TierLimits{PerMinute: 120, PerDay: 50_000, MaxKeys: 10, MaxStreams: 10}
	default:
		return TierLimits{PerMinute: 30, PerDay: 5_000, MaxKeys: 3, MaxStreams: 2}
	}
}

// KeyEnv is an API key's environment: live keys reach mainnet credentials,
// test keys testnet credentials.
type KeyEnv string

// Key environments.
const (
	KeyEnvLive KeyEnv = "live"
	KeyEnvTest KeyEnv = "test"
)

// Valid reports whether e is a known key environment.
func (e KeyEnv) Valid() bool { return e == KeyEnvLive || e == KeyEnvTest }

// Environment is a credential's network.
type Environment string

// Credential environments.
const (
	Mainnet Environment = "mainnet"
	Testnet Environment = "testnet"
)

// Valid reports whether e is a known environment.
func (e Environment) Valid() bool { return e == Mainnet || e == Testnet }

// Matches reports whether a key of environment k may use a credential on e.
func (e Environment) Matches(k KeyEnv) bool {
	return (k == KeyEnvLive && e == Mainnet) || (k == KeyEnvTest && e == Testnet)
}

// Exchange is the lowercase identifier of an upstream venue.
type Exchange string

// Supported exchanges.
const (
	Hyperliquid Exchange = "hyperliquid"
	Paradex     Exchange = "paradex"
	Binance     Exchange = "binance"
	Bybit       Exchange = "bybit"
	OKX         Exchange = "okx"
	Aster       Exchange = "aster"
	Paper       Exchange = "paper"
)

// Exchanges lists every supported exchange.
var Exchanges = []Exchange{Hyperliquid, Paradex, Binance, Bybit, OKX, Aster, Paper}

// Valid reports whether x is a supported exchange.
func (x Exchange) Valid() bool {
	for _, e := range Exchanges {
		if e == x {
			return true
		}
	}
	return false
}

// KeyInfo is what the edge needs to know about an API key. It never holds
// the key itself, only its SHA-256.
type KeyInfo struct {
	ID                 string     `json:"id"`
	AccountID          string     `json:"accountId"`
	Hash               string     `json:"hash"`
	Display            string     `json:"display"`
	Env                KeyEnv     `json:"env"`
	Tier               Tier       `json:"tier"`
	AllowedOperations  []string   `json:"allowedOperations,omitempty"`
	AllowedExchanges   []Exchange `json:"allowedExchanges,omitempty"`
	AllowedCredentials []string   `json:"allowedCredentials,omitempty"`
	ExpiresAt          *time.Time `json:"expiresAt,omitempty"`
	RevokedAt          *time.Time `json:"revokedAt,omitempty"`
	CreatedAt          time.Time  `json:"createdAt"`
	Guards
}

// Guards limit what a key may trade (DESIGN §12); the zero value limits
// nothing. Notionals are in the market's quote currency.
type Guards struct {
	// ReadOnly forbids placements, cancels, close-all and leverage changes.
	ReadOnly bool `json:"readOnly,omitempty"`
	// AllowedMarkets lists the markets the key may trade, canonical
	// (BTC-USDT-PERP) or a bare base (BTC: that asset on every quote).
	AllowedMarkets []string `json:"allowedMarkets,omitempty"`
	// MaxOrderNotional caps size × price of one order that can add to a
	// position.
	MaxOrderNotional *decimal.Decimal `json:"maxOrderNotional,omitempty"`
	// MaxDailyNotional caps the sum of those notionals per UTC day.
	MaxDailyNotional *decimal.Decimal `json:"maxDailyNotional,omitempty"`
	// MaxLeverage caps setLeverage, and refuses orders that can add
	// exposure on a market whose leverage is above it.
	MaxLeverage int `json:"maxLeverage,omitempty"`
	// MaxPositionNotional caps, per market, the position after an order
	// fills plus the same-side resting orders (DESIGN §13).
	MaxPositionNotional *decimal.Decimal `json:"maxPositionNotional,omitempty"`
}

// Trading reports whether any guard needs the connector's view to judge
// orders (ReadOnly, and MaxLeverage on setLeverage, the edge checks
// itself; MaxLeverage on placements needs the market's leverage).
func (g Guards) Trading() bool {
	return len(g.AllowedMarkets) > 0 || g.MaxOrderNotional != nil || g.MaxDailyNotional != nil ||
		g.MaxLeverage > 0 || g.MaxPositionNotional != nil
}

// CredentialInfo is a credential's metadata, never its secret.
type CredentialInfo struct {
	ID          string      `json:"credentialId"`
	AccountID   string      `json:"accountId"`
	Exchange    Exchange    `json:"exchange"`
	Environment Environment `json:"env"`
	Label       string      `json:"label"`
	CreatedAt   time.Time   `json:"createdAt"`
}
