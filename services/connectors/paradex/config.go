package paradex

import (
	"errors"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
)

// Default REST bases (Paradex docs, "API URLs").
const (
	DefaultMainnetURL = "https://api.prod.paradex.trade/v1"
	DefaultTestnetURL = "https://api.testnet.paradex.trade/v1"
)

// Config holds the Paradex connector's own settings. Its REST bases are
// the v1 bases (with the /v1 prefix).
type Config struct {
	venuekit.REST
	// AuthExpiry is how long a /v1/auth signature stays valid
	// (PARADEX-SIGNATURE-EXPIRATION minus PARADEX-TIMESTAMP).
	AuthExpiry time.Duration
	// Tokens caches JWTs per credential; nil means a per-process cache.
	Tokens TokenStore
}

// DefaultConfig returns Paradex's public hosts, a 3-minute auth signature
// and a 10 s timeout.
func DefaultConfig() Config {
	return Config{REST: venuekit.NewREST(DefaultMainnetURL, DefaultTestnetURL), AuthExpiry: 3 * time.Minute}
}

// LoadConfig reads the Paradex settings through lookup.
// PERPGATE_PARADEX_URL replaces the REST base of both environments (a
// simulator or a proxy); it includes the /v1 prefix.
// PERPGATE_PARADEX_AUTH_EXPIRY (milliseconds, 10 s to a week) is how long
// a /v1/auth signature stays valid.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c, e := DefaultConfig(), venuekit.NewEnv(lookup)
	e.String("PERPGATE_PARADEX_URL", &c.MainnetURL, &c.TestnetURL)
	e.Millis("PERPGATE_PARADEX_AUTH_EXPIRY", &c.AuthExpiry)
	return c, e.Err(c.Validate())
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	err := c.Check("Paradex", "PERPGATE_PARADEX_URL", DefaultMainnetURL)
	if c.AuthExpiry < 10*time.Second || c.AuthExpiry > 7*24*time.Hour {
		err = errors.Join(err, errors.New("PERPGATE_PARADEX_AUTH_EXPIRY must be 10000 to 604800000 milliseconds (10 s to a week)"))
	}
	return err
}
