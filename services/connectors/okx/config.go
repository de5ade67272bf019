package okx

import (
	"errors"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
)

// DefaultURL is OKX's REST base. Demo trading uses the same host with the
// x-simulated-trading header, so one URL serves both environments.
const DefaultURL = "https://www.okx.com"

// Websockets (fact sheet §1, §10): live, and demo trading's own host for
// testnet credentials; public for market data, private for the account.
const (
	LiveStreamURL  = "wss://ws.okx.com:8443/ws/v5/public"
	DemoStreamURL  = "wss://wspap.okx.com:8443/ws/v5/public"
	LivePrivateURL = "wss://ws.okx.com:8443/ws/v5/private"
	DemoPrivateURL = "wss://wspap.okx.com:8443/ws/v5/private"
)

// Config holds the OKX connector's own settings: MainnetURL serves live
// credentials, TestnetURL demo trading.
type Config struct {
	venuekit.REST
	// ExpTime bounds how long OKX may still act on a placement (the expTime
	// header, honoured by the order endpoints): a request that sat in a
	// queue longer is discarded instead of executed late.
	ExpTime time.Duration // PERPGATE_OKX_EXP_TIME (milliseconds)
}

// DefaultConfig returns OKX's public host for both environments, a 5 s
// expTime and a 10 s timeout.
func DefaultConfig() Config {
	return Config{REST: venuekit.NewREST(DefaultURL, DefaultURL), ExpTime: 5 * time.Second}
}

// LoadConfig reads the OKX settings through lookup. PERPGATE_OKX_URL
// replaces the REST base of both environments (a simulator or a proxy);
// PERPGATE_OKX_EXP_TIME sets the order expTime window in milliseconds
// (1 to 60000).
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c, e := DefaultConfig(), venuekit.NewEnv(lookup)
	e.String("PERPGATE_OKX_URL", &c.MainnetURL, &c.TestnetURL)
	e.Millis("PERPGATE_OKX_EXP_TIME", &c.ExpTime)
	return c, e.Err(c.Validate())
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	return errors.Join(c.Check("OKX", "PERPGATE_OKX_URL", DefaultURL),
		connector.CheckRecvWindow("PERPGATE_OKX_EXP_TIME", c.ExpTime))
}
