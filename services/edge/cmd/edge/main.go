// Command edge is perpgate's HTTP front door as its own process.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/gcfloor"
	"github.com/perpgate/perpgate/pkg/health"
	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/services/edge"
	"github.com/redis/go-redis/v9"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "edge:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	logCfg, err := telemetry.LoadLogConfig(os.LookupEnv, "json")
	if err != nil {
		return err
	}
	cfg, err := edge.LoadConfig(os.LookupEnv)
	if err != nil {
		return err
	}
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return fmt.Errorf("PERPGATE_REDIS_URL: %w", err)
	}
	log := telemetry.NewLogger(os.Stdout, logCfg)
	telemetry.RouteRedisLogs(log)
	log.Info("edge starting", "version", version)
	stopProfile, err := telemetry.StartCPUProfile(os.LookupEnv)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopGCFloor, err := gcfloor.Start(os.LookupEnv)
	if err != nil {
		return err
	}
	defer stopGCFloor()
	rdb := redis.NewClient(ratelimit.FailFast(opts)) // the limiter's store: an outage is a quick 503
	defer rdb.Close()
	nc, err := bus.Connect(cfg.NATSURL, "edge", cfg.NATSAuth, log)
	if err != nil {
		return err
	}
	defer bus.Drain(nc, 10*time.Second) // replies in flight are flushed before exit
	shutdown, err := telemetry.SetupTracing(ctx, "perpgate-edge", os.LookupEnv)
	if err != nil {
		return err
	}
	defer shutdown(context.WithoutCancel(ctx))
	policy := health.WatchRedisPolicy(ctx, rdb, log)
	srv, err := edge.New(cfg, edge.Deps{NATS: nc, Limiter: ratelimit.NewPipelined(ratelimit.NewRedis(rdb, cfg.SubjectPrefix+":rl", nil)),
		Logger: log, Metrics: telemetry.NewMetrics(),
		Checks: map[string]health.Check{"redis": policy.Check}, StoreGuard: policy.Err})
	if err != nil {
		return err
	}
	stopHealth, err := health.Serve(ctx, cfg.HealthAddr, srv.HealthHandler(), log)
	if err != nil {
		return err
	}
	defer stopHealth()
	return srv.Run(ctx)
}
