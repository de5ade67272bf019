package okx

import (
	"errors"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"

	"github.com/perpgate/perpgate/pkg/contract"
)

// DefaultURL is OKX's REST base. Demo trading uses the same host with the
// x-simulated-trading header, so one URL serves both environments.
const DefaultURL = "https://www.okx.com"

// Config holds the OKX connector's own settings.
type Config struct {
	MainnetURL string // REST base for mainnet (live) credentials
	TestnetURL string // REST base for testnet (demo trading) credentials
	// ExpTime bounds how long OKX may still act on a placement (the expTime
	// header, honoured by the order endpoints): a request that sat in a
	// queue longer is discarded instead of executed late.
	ExpTime time.Duration // PERPGATE_OKX_EXP_TIME (milliseconds)
	Timeout time.Duration // per upstream call
	// Now is the local clock; nil means time.Now. Tests skew it.
	Now func() time.Time
}

// DefaultConfig returns OKX's public host for both environments, a 5 s
// expTime and a 10 s timeout.
func DefaultConfig() Config {
	return Config{MainnetURL: DefaultURL, TestnetURL: DefaultURL, ExpTime: 5 * time.Second, Timeout: 10 * time.Second}
}

// LoadConfig reads the OKX settings through lookup. PERPGATE_OKX_URL
// replaces the REST base of both environments (a simulator or a proxy);
// PERPGATE_OKX_EXP_TIME sets the order expTime window in milliseconds
// (1 to 60000).
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c := DefaultConfig()
	var errs []error
	if v, ok := lookup("PERPGATE_OKX_URL"); ok && v != "" {
		c.MainnetURL, c.TestnetURL = v, v
	}
	if v, ok := lookup("PERPGATE_OKX_EXP_TIME"); ok && v != "" {
		var err error
		if c.ExpTime, err = connector.Millis("PERPGATE_OKX_EXP_TIME", v); err != nil {
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
		errs = append(errs, connector.CheckBaseURL("PERPGATE_OKX_URL", "OKX "+u.name, u.v, DefaultURL))
	}
	errs = append(errs, connector.CheckRecvWindow("PERPGATE_OKX_EXP_TIME", c.ExpTime))
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("the OKX upstream timeout must be positive"))
	}
	return errors.Join(errs...)
}

// baseURL is the REST base of a credential's environment.
func (c Config) baseURL(env contract.Environment) string {
	if env == contract.Testnet {
		return strings.TrimRight(c.TestnetURL, "/")
	}
	return strings.TrimRight(c.MainnetURL, "/")
}
