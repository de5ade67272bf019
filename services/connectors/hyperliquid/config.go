package hyperliquid

import (
	"errors"
	"net/url"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/shopspring/decimal"
)

// Upstream base URLs (fact sheet §1).
const (
	MainnetURL = "https://api.hyperliquid.xyz"
	TestnetURL = "https://api.hyperliquid-testnet.xyz"
)

// Config holds the Hyperliquid connector's settings.
type Config struct {
	// URL replaces the base URL of both environments (PERPGATE_HYPERLIQUID_URL),
	// e.g. a simulator. It never decides mainnet or testnet: signatures
	// follow the credential's environment.
	URL string
	// Slippage bounds market orders and closeAllPositions: the IOC limit
	// price is mid × (1 ± Slippage) (PERPGATE_HYPERLIQUID_SLIPPAGE, default
	// 0.05 = 5%, the SDK's default).
	Slippage decimal.Decimal
	// WeightPerMinute is the per-IP request weight this process may spend
	// (PERPGATE_HYPERLIQUID_WEIGHT_PER_MINUTE, default 1200, the venue's
	// budget). Lower it when several replicas share one egress IP.
	WeightPerMinute int
	// Timeout bounds one upstream call.
	Timeout time.Duration
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Slippage: decimal.RequireFromString("0.05"), WeightPerMinute: 1200, Timeout: 10 * time.Second}
}

// LoadConfig reads the PERPGATE_HYPERLIQUID_* settings through lookup.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c, e := DefaultConfig(), venuekit.NewEnv(lookup)
	e.String("PERPGATE_HYPERLIQUID_URL", &c.URL)
	e.Decimal("PERPGATE_HYPERLIQUID_SLIPPAGE", "0.05", &c.Slippage)
	e.Int("PERPGATE_HYPERLIQUID_WEIGHT_PER_MINUTE", &c.WeightPerMinute)
	return c, e.Err(c.Validate())
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	if c.URL != "" {
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, errors.New("PERPGATE_HYPERLIQUID_URL must be an http(s) URL such as http://127.0.0.1:8091"))
		}
	}
	if !c.Slippage.IsPositive() || c.Slippage.GreaterThan(decimal.RequireFromString("0.5")) {
		errs = append(errs, errors.New("PERPGATE_HYPERLIQUID_SLIPPAGE must be above 0 and at most 0.5 (the venue rejects prices 80% away from the reference)"))
	}
	if c.WeightPerMinute < 1 {
		errs = append(errs, errors.New("PERPGATE_HYPERLIQUID_WEIGHT_PER_MINUTE must be at least 1"))
	}
	return errors.Join(errs...)
}
