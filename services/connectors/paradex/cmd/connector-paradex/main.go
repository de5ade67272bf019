// Command connector-paradex serves the Paradex perpetual operations on NATS.
package main

import (
	"fmt"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/paradex"
	"github.com/redis/go-redis/v9"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	connector.Main("connector-paradex", version, paradex.LoadConfig, build)
}

// build shares JWTs between replicas through Redis when there is one: a
// token is per credential, not per replica.
func build(cfg paradex.Config, s connector.Setup) (connector.Adapter, func(), error) {
	if s.Service.RedisURL == "" {
		s.Log.Warn("PERPGATE_REDIS_URL is unset: each replica authenticates to Paradex on its own")
		return paradex.NewAdapter(cfg, nil), nil, nil
	}
	opts, err := redis.ParseURL(s.Service.RedisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("PERPGATE_REDIS_URL: %w", err)
	}
	rdb := redis.NewClient(opts)
	cfg.Tokens = paradex.NewRedisTokens(rdb, s.Service.SubjectPrefix+":paradex:jwt:")
	return paradex.NewAdapter(cfg, nil), func() { _ = rdb.Close() }, nil
}
