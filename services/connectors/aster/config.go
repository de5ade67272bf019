package aster

import (
	"errors"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/aster/sign"
)

// Default hosts (fact sheet §1).
const (
	DefaultMainnetURL       = "https://fapi.asterdex.com"
	DefaultTestnetURL       = "https://fapi.asterdex-testnet.com"
	DefaultMainnetStreamURL = "wss://fstream.asterdex.com"
	DefaultTestnetStreamURL = "wss://fstream.asterdex-testnet.com"
)

// Config holds the Aster connector's own settings.
type Config struct {
	MainnetURL string // REST base for mainnet credentials
	TestnetURL string // REST base for testnet credentials
	// MainnetStreamURL and TestnetStreamURL are the websocket bases
	// (market streams and the user data stream).
	MainnetStreamURL, TestnetStreamURL string
	Timeout                            time.Duration // per upstream call
	// Nonces hands out request nonces; nil: one counter in this process.
	// Replicas signing for the same API wallet must share one
	// (NewRedisNonces).
	Nonces NonceSource
	// Now is the local clock; nil means time.Now. Tests skew it.
	Now func() time.Time
}

// DefaultConfig returns Aster's public hosts and a 10 s timeout.
func DefaultConfig() Config {
	return Config{
		MainnetURL:       DefaultMainnetURL,
		TestnetURL:       DefaultTestnetURL,
		MainnetStreamURL: DefaultMainnetStreamURL,
		TestnetStreamURL: DefaultTestnetStreamURL,
		Timeout:          10 * time.Second,
	}
}

// LoadConfig reads the Aster settings through lookup. PERPGATE_ASTER_URL
// replaces the REST base of both environments (a simulator or a proxy);
// the websocket host is derived from it.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c := DefaultConfig()
	if v, ok := lookup("PERPGATE_ASTER_URL"); ok && v != "" {
		c.MainnetURL, c.TestnetURL = v, v
		c.MainnetStreamURL, c.TestnetStreamURL = wsURL(v), wsURL(v)
	}
	return c, c.Validate()
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	for _, u := range []struct{ name, v string }{{"mainnet URL", c.MainnetURL}, {"testnet URL", c.TestnetURL}} {
		errs = append(errs, connector.CheckBaseURL("PERPGATE_ASTER_URL", "Aster "+u.name, u.v, DefaultMainnetURL))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("the Aster upstream timeout must be positive"))
	}
	return errors.Join(errs...)
}

// wsURL turns an http(s) base into the ws(s) one of the same host.
func wsURL(base string) string {
	return "ws" + strings.TrimPrefix(strings.TrimRight(base, "/"), "http")
}

// streamURL is the websocket base of env.
func (c Config) streamURL(env contract.Environment) string {
	if env == contract.Testnet {
		return strings.TrimRight(c.TestnetStreamURL, "/")
	}
	return strings.TrimRight(c.MainnetStreamURL, "/")
}

// baseURL is the REST base of a credential's environment.
func (c Config) baseURL(env contract.Environment) string {
	if env == contract.Testnet {
		return strings.TrimRight(c.TestnetURL, "/")
	}
	return strings.TrimRight(c.MainnetURL, "/")
}

// chainID is the EIP-712 chain id of env (fact sheet §0 #4).
func chainID(env contract.Environment) int64 {
	if env == contract.Testnet {
		return sign.TestnetChainID
	}
	return sign.MainnetChainID
}
