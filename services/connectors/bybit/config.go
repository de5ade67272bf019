package bybit

import (
	"errors"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"

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
	venuekit.REST
	DemoURL    string        // REST base for testnet credentials with demo:true
	RecvWindow time.Duration // PERPGATE_BYBIT_RECV_WINDOW (milliseconds): how long a signed request stays valid
}

// DefaultConfig returns the defaults: Bybit's public hosts, a 5 s receive
// window (Bybit's default) and a 10 s timeout.
func DefaultConfig() Config {
	return Config{REST: venuekit.NewREST(DefaultMainnetURL, DefaultTestnetURL), DemoURL: DefaultDemoURL, RecvWindow: 5 * time.Second}
}

// LoadConfig reads the Bybit settings through lookup. PERPGATE_BYBIT_URL
// replaces the REST base of every environment (a simulator or a proxy);
// PERPGATE_BYBIT_RECV_WINDOW sets the receive window in milliseconds (1 to
// 60000).
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c, e := DefaultConfig(), venuekit.NewEnv(lookup)
	e.String("PERPGATE_BYBIT_URL", &c.MainnetURL, &c.TestnetURL, &c.DemoURL)
	e.Millis("PERPGATE_BYBIT_RECV_WINDOW", &c.RecvWindow)
	return c, e.Err(c.Validate())
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	return errors.Join(c.Check("Bybit", "PERPGATE_BYBIT_URL", DefaultMainnetURL, venuekit.URL{Name: "demo URL", Value: c.DemoURL}),
		connector.CheckRecvWindow("PERPGATE_BYBIT_RECV_WINDOW", c.RecvWindow))
}

// baseURL is the REST base of a credential's environment: mainnet, testnet,
// or demo trading for a testnet credential marked demo.
func (c Config) baseURL(env contract.Environment, demo bool) string {
	if env == contract.Testnet && demo {
		return strings.TrimRight(c.DemoURL, "/")
	}
	return c.BaseURL(env)
}
