package binance

import (
	"errors"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"

	"github.com/perpgate/perpgate/pkg/contract"
)

// Default REST bases (fact sheet §1). Binance's docs name demo-fapi the
// testnet REST base; testnet.binancefuture.com serves the same venue.
const (
	DefaultMainnetURL = "https://fapi.binance.com"
	DefaultTestnetURL = "https://demo-fapi.binance.com"
	// Market-data websockets (fact sheet §12); the routes /market and
	// /public are added per stream class.
	DefaultMainnetStreamURL = "wss://fstream.binance.com"
	DefaultTestnetStreamURL = "wss://fstream.binancefuture.com"
)

// Config holds the Binance connector's own settings.
type Config struct {
	venuekit.REST
	fapi.Sockets               // market streams; the user data stream under /private
	RecvWindow   time.Duration // PERPGATE_BINANCE_RECV_WINDOW (milliseconds): how long a signed request stays valid
	// ListenKeyKeepAlive is how often the user data stream's listen key is
	// extended; 30 min when zero (the key lives 60).
	ListenKeyKeepAlive time.Duration
}

// DefaultConfig returns the defaults: Binance's public hosts, a 5 s
// receive window (Binance's default and recommended maximum) and a 10 s
// timeout.
func DefaultConfig() Config {
	return Config{
		REST:       venuekit.NewREST(DefaultMainnetURL, DefaultTestnetURL),
		Sockets:    fapi.Sockets{MainnetStreamURL: DefaultMainnetStreamURL, TestnetStreamURL: DefaultTestnetStreamURL},
		RecvWindow: 5 * time.Second,
	}
}

// LoadConfig reads the Binance settings through lookup.
// PERPGATE_BINANCE_URL replaces the REST base of both environments (a
// simulator or a proxy); PERPGATE_BINANCE_RECV_WINDOW sets recvWindow in
// milliseconds (1 to 60000).
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c, e := DefaultConfig(), venuekit.NewEnv(lookup)
	if e.String("PERPGATE_BINANCE_URL", &c.MainnetURL, &c.TestnetURL) {
		// A simulator serves its websocket on the same host.
		c.MainnetStreamURL, c.TestnetStreamURL = venuekit.WSURL(c.MainnetURL), venuekit.WSURL(c.MainnetURL)
	}
	e.String("PERPGATE_BINANCE_WS_URL", &c.MainnetStreamURL, &c.TestnetStreamURL)
	e.Millis("PERPGATE_BINANCE_RECV_WINDOW", &c.RecvWindow)
	return c, e.Err(c.Validate())
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	return errors.Join(c.Check("Binance", "PERPGATE_BINANCE_URL", DefaultMainnetURL),
		connector.CheckRecvWindow("PERPGATE_BINANCE_RECV_WINDOW", c.RecvWindow))
}

// privateURL is env's user data socket base, the listen key appended:
// the /private route since Binance split its websocket URLs
// (…/usds-margined-futures/user-data-streams/Connect). Whether the
// testnet host kept the legacy /ws/<listenKey> instead is not documented;
// PERPGATE_BINANCE_WS_URL moves the base, as for the market streams.
func (c Config) privateURL(env contract.Environment) string {
	return c.StreamURL(env) + "/private/ws"
}

func (c Config) listenKeyKeepAlive() time.Duration {
	if c.ListenKeyKeepAlive > 0 {
		return c.ListenKeyKeepAlive
	}
	return 30 * time.Minute
}
