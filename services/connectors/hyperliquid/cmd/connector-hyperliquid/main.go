// Command connector-hyperliquid serves Hyperliquid's operations on NATS.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/redis/go-redis/v9"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "connector-hyperliquid:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	logCfg, err1 := telemetry.LoadLogConfig(os.LookupEnv, "json")
	svcCfg, err2 := connector.LoadServiceConfig(os.LookupEnv)
	cfg, err3 := hyperliquid.LoadConfig(os.LookupEnv)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	log := telemetry.NewLogger(os.Stdout, logCfg)
	telemetry.RouteRedisLogs(log)
	log.Info("connector-hyperliquid starting", "version", version)
	var opts []hyperliquid.Option
	if svcCfg.RedisURL != "" {
		// Replicas share one nonce counter per agent (fact sheet §4.4).
		ropts, err := redis.ParseURL(svcCfg.RedisURL)
		if err != nil {
			return fmt.Errorf("PERPGATE_REDIS_URL: %w", err)
		}
		rdb := redis.NewClient(ropts)
		defer rdb.Close()
		opts = append(opts, hyperliquid.WithNonces(hyperliquid.NewRedisNonces(rdb, svcCfg.SubjectPrefix+":hl:nonce:", nil)))
	} else {
		log.Warn("PERPGATE_REDIS_URL is unset: hyperliquid nonces are per replica; run one replica per agent")
	}
	adapter := hyperliquid.NewAdapter(cfg, connector.NewHTTPClient(cfg.Timeout), opts...)
	return connector.Serve(ctx, svcCfg, adapter, log)
}
