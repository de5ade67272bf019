package paradex

import (
	"errors"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Default REST bases (Paradex docs, "API URLs").
const (
	DefaultMainnetURL = "https://api.prod.paradex.trade/v1"
	DefaultTestnetURL = "https://api.testnet.paradex.trade/v1"
)

// Config holds the Paradex connector's own settings.
type Config struct {
	MainnetURL string        // REST v1 base for mainnet credentials
	TestnetURL string        // REST v1 base for testnet credentials
	Timeout    time.Duration // per upstream call
	// AuthExpiry is how long a /v1/auth signature stays valid
	// (PARADEX-SIGNATURE-EXPIRATION minus PARADEX-TIMESTAMP).
	AuthExpiry time.Duration
	// Now is the local clock; nil means time.Now. Tests move it.
	Now func() time.Time
	// Tokens caches JWTs per credential; nil means a per-process cache.
	Tokens TokenStore
}

// DefaultConfig returns Paradex's public hosts, a 3-minute auth signature
// and a 10 s timeout.
func DefaultConfig() Config {
	return Config{
		MainnetURL: DefaultMainnetURL,
		TestnetURL: DefaultTestnetURL,
		Timeout:    10 * time.Second,
		AuthExpiry: 3 * time.Minute,
	}
}

// LoadConfig reads the Paradex settings through lookup.
// PERPGATE_PARADEX_URL replaces the REST base of both environments (a
// simulator or a proxy); it includes the /v1 prefix.
// PERPGATE_PARADEX_AUTH_EXPIRY (milliseconds, 10 s to a week) is how long
// a /v1/auth signature stays valid.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c := DefaultConfig()
	var errs []error
	if v, ok := lookup("PERPGATE_PARADEX_URL"); ok && v != "" {
		c.MainnetURL, c.TestnetURL = v, v
	}
	if v, ok := lookup("PERPGATE_PARADEX_AUTH_EXPIRY"); ok && v != "" {
		var err error
		if c.AuthExpiry, err = connector.Millis("PERPGATE_PARADEX_AUTH_EXPIRY", v); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, c.Validate())
	return c, errors.Join(errs...)
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	for _, u := range []struct{ name, v string }{{"mainnet URL", c.MainnetURL}, {"testnet URL", c.TestnetURL}} {
		errs = append(errs, connector.CheckBaseURL("PERPGATE_PARADEX_URL", "Paradex "+u.name, u.v, DefaultMainnetURL))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("the Paradex upstream timeout must be positive"))
	}
	if c.AuthExpiry < 10*time.Second || c.AuthExpiry > 7*24*time.Hour {
		errs = append(errs, errors.New("PERPGATE_PARADEX_AUTH_EXPIRY must be 10000 to 604800000 milliseconds (10 s to a week)"))
	}
	return errors.Join(errs...)
}

func (c Config) baseURL(env contract.Environment) string {
	if env == contract.Testnet {
		return strings.TrimRight(c.TestnetURL, "/")
	}
	return strings.TrimRight(c.MainnetURL, "/")
}
