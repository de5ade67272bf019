// Command connector-hyperliquid serves Hyperliquid's operations on NATS.
package main

import (
	"fmt"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/redis/go-redis/v9"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	connector.Main("connector-hyperliquid", version, hyperliquid.LoadConfig, build)
}

func build(cfg hyperliquid.Config, s connector.Setup) (connector.Adapter, func(), error) {
	var opts []hyperliquid.Option
	cleanup := func() {}
	if s.Service.RedisURL != "" {
		// Replicas share one nonce counter per agent (fact sheet §4.4).
		ropts, err := redis.ParseURL(s.Service.RedisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("PERPGATE_REDIS_URL: %w", err)
		}
		rdb := redis.NewClient(ropts)
		cleanup = func() { _ = rdb.Close() }
		opts = append(opts, hyperliquid.WithNonces(hyperliquid.NewRedisNonces(rdb, s.Service.SubjectPrefix+":hl:nonce:", nil)))
	} else {
		s.Log.Warn("PERPGATE_REDIS_URL is unset: hyperliquid nonces are per replica; run one replica per agent")
	}
	return hyperliquid.NewAdapter(cfg, connector.NewHTTPClient(cfg.Timeout), opts...), cleanup, nil
}
