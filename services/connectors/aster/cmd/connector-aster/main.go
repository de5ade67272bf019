// Command connector-aster serves Aster's operations on NATS.
package main

import (
	"fmt"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/aster"
	"github.com/redis/go-redis/v9"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	connector.Main("connector-aster", version, aster.LoadConfig, build)
}

func build(cfg aster.Config, s connector.Setup) (connector.Adapter, func(), error) {
	cleanup := func() {}
	if s.Service.RedisURL != "" {
		// Replicas share one nonce counter per API wallet (fact sheet §0 #3).
		ropts, err := redis.ParseURL(s.Service.RedisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("PERPGATE_REDIS_URL: %w", err)
		}
		rdb := redis.NewClient(ropts)
		cleanup = func() { _ = rdb.Close() }
		cfg.Nonces = aster.NewRedisNonces(rdb, s.Service.SubjectPrefix+":aster:nonce:")
	} else {
		s.Log.Warn("PERPGATE_REDIS_URL is unset: aster nonces are per replica; run one replica per API wallet")
	}
	return aster.NewAdapter(cfg, nil), cleanup, nil
}
