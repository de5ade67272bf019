package bybit

import (
	"errors"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"

	"github.com/perpgate/perpgate/pkg/contract"
)

// Default REST hosts (Bybit v5 guide, "Base endpoint"; demo trading page).
// Demo keys are made on the mainnet site under Demo Trading and work only
// on the demo host.
const (
	DefaultMainnetURL = "https://api.bybit.com"
	DefaultTestnetURL = "https://api-testnet.bybit.com"
	DefaultDemoURL    = "https://api-demo.bybit.com"
)

// Config holds the Bybit connector's own settings.
type Config struct {
	MainnetURL string        // REST base for mainnet credentials
	TestnetURL string        // REST base for testnet credentials
	DemoURL    string        // REST base for testnet credentials with demo:true
	RecvWindow time.Duration // PERPGATE_BYBIT_RECV_WINDOW (milliseconds): how long a signed request stays valid
	Timeout    time.Duration // per upstream call
	// Now is the local clock; nil means time.Now. Tests skew it.
	Now func() time.Time
}

// DefaultConfig returns the defaults: Bybit's public hosts, a 5 s receive
// window (Bybit's default) and a 10 s timeout.
func DefaultConfig() Config {
	return Config{
		MainnetURL: DefaultMainnetURL,
		TestnetURL: DefaultTestnetURL,
		DemoURL:    DefaultDemoURL,
		RecvWindow: 5 * time.Second,
		Timeout:    10 * time.Second,
	}
}

// LoadConfig reads the Bybit settings through lookup. PERPGATE_BYBIT_URL
// replaces the REST base of every environment (a simulator or a proxy);
// PERPGATE_BYBIT_RECV_WINDOW sets the receive window in milliseconds (1 to
// 60000).
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c := DefaultConfig()
	var errs []error
	if v, ok := lookup("PERPGATE_BYBIT_URL"); ok && v != "" {
		c.MainnetURL, c.TestnetURL, c.DemoURL = v, v, v
	}
	if v, ok := lookup("PERPGATE_BYBIT_RECV_WINDOW"); ok && v != "" {
		var err error
		if c.RecvWindow, err = connector.Millis("PERPGATE_BYBIT_RECV_WINDOW", v); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, c.Validate())
	return c, errors.Join(errs...)
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	for _, u := range []struct{ name, v string }{{"mainnet URL", c.MainnetURL}, {"testnet URL", c.TestnetURL}, {"demo URL", c.DemoURL}} {
		errs = append(errs, connector.CheckBaseURL("PERPGATE_BYBIT_URL", "Bybit "+u.name, u.v, DefaultMainnetURL))
	}
	errs = append(errs, connector.CheckRecvWindow("PERPGATE_BYBIT_RECV_WINDOW", c.RecvWindow))
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("the Bybit upstream timeout must be positive"))
	}
	return errors.Join(errs...)
}

// baseURL is the REST base of a credential's environment: mainnet, testnet,
// or demo trading for a testnet credential marked demo.
func (c Config) baseURL(env contract.Environment, demo bool) string {
	switch {
	case env != contract.Testnet:
		return strings.TrimRight(c.MainnetURL, "/")
	case demo:
		return strings.TrimRight(c.DemoURL, "/")
	}
	return strings.TrimRight(c.TestnetURL, "/")
}
