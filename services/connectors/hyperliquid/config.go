package hyperliquid

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

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
	c := DefaultConfig()
	var errs []error
	if v, ok := lookup("PERPGATE_HYPERLIQUID_URL"); ok && v != "" {
		c.URL = v
	}
	if v, ok := lookup("PERPGATE_HYPERLIQUID_SLIPPAGE"); ok && v != "" {
		d, err := decimal.NewFromString(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("PERPGATE_HYPERLIQUID_SLIPPAGE: %q is not a decimal such as 0.05", v))
		}
		c.Slippage = d
	}
	if v, ok := lookup("PERPGATE_HYPERLIQUID_WEIGHT_PER_MINUTE"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("PERPGATE_HYPERLIQUID_WEIGHT_PER_MINUTE: %q is not an integer", v))
		}
		c.WeightPerMinute = n
	}
	errs = append(errs, c.Validate())
	return c, errors.Join(errs...)
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
