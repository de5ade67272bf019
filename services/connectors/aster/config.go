package aster

import (
	"time"

	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/aster/sign"
	"github.com/redis/go-redis/v9"
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
	venuekit.REST
	fapi.Sockets // market streams and the user data stream
	// Nonces hands out request nonces in microseconds; nil: one counter
	// in this process. Replicas signing for the same API wallet must
	// share one (NewRedisNonces).
	Nonces venuekit.ClockedNonces
}

// NewNonces is the in-process microsecond nonce counter.
func NewNonces() *venuekit.Nonces { return venuekit.NewNonces(nil).In(time.Microsecond) }

// NewRedisNonces is the microsecond nonce counter replicas share: the
// venue keeps each signer's last 100 nonces and refuses a repeat (fact
// sheet §0 #3), so two replicas must never draw the same one.
func NewRedisNonces(rdb redis.UniversalClient, prefix string) *venuekit.RedisNonces {
	return venuekit.NewRedisNonces(rdb, prefix, nil).In(time.Microsecond)
}

// DefaultConfig returns Aster's public hosts and a 10 s timeout.
func DefaultConfig() Config {
	return Config{
		REST:    venuekit.NewREST(DefaultMainnetURL, DefaultTestnetURL),
		Sockets: fapi.Sockets{MainnetStreamURL: DefaultMainnetStreamURL, TestnetStreamURL: DefaultTestnetStreamURL},
	}
}

// LoadConfig reads the Aster settings through lookup. PERPGATE_ASTER_URL
// replaces the REST base of both environments (a simulator or a proxy);
// the websocket host is derived from it.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c, e := DefaultConfig(), venuekit.NewEnv(lookup)
	if e.String("PERPGATE_ASTER_URL", &c.MainnetURL, &c.TestnetURL) {
		c.MainnetStreamURL, c.TestnetStreamURL = venuekit.WSURL(c.MainnetURL), venuekit.WSURL(c.MainnetURL)
	}
	return c, e.Err(c.Validate())
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	return c.Check("Aster", "PERPGATE_ASTER_URL", DefaultMainnetURL)
}

// chainID is the EIP-712 chain id of env (fact sheet §0 #4).
func chainID(env contract.Environment) int64 {
	if env == contract.Testnet {
		return sign.TestnetChainID
	}
	return sign.MainnetChainID
}
