// Command keys runs the keys service on its own: accounts, API keys and
// credentials on NATS plus the admin API (DESIGN §1, §5).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/gcfloor"
	"github.com/perpgate/perpgate/pkg/health"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/filestore"
	"github.com/perpgate/perpgate/services/keys/postgres"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logCfg, err := telemetry.LoadLogConfig(os.LookupEnv, "json")
	if err != nil {
		fmt.Fprintln(os.Stderr, "keys:", err)
		os.Exit(1)
	}
	log := telemetry.NewLogger(os.Stdout, logCfg)
	if err := run(ctx, log); err != nil {
		log.Error("keys service failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger) error {
	cfg, err := keys.LoadConfig(os.LookupEnv)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	log.Info("keys starting", "version", version)
	stopGCFloor, err := gcfloor.Start(os.LookupEnv)
	if err != nil {
		return err
	}
	defer stopGCFloor()
	var store keys.Store
	if cfg.DatabaseURL != "" {
		store, err = postgres.Open(ctx, cfg.DatabaseURL.Reveal())
	} else {
		store, err = filestore.Open(cfg.DataDir)
	}
	if err != nil {
		return err
	}
	defer store.Close()
	if cfg.NATSAuth.User == "" {
		log.Warn("NATS WITHOUT A USER: PERPGATE_NATS_USER is unset, so any client of this NATS server can ask for decrypted exchange secrets; run NATS with deploy/nats.conf and set PERPGATE_NATS_USER and PERPGATE_NATS_PASSWORD")
	}
	nc, err := bus.Connect(cfg.NATSURL, "perpgate-keys", cfg.NATSAuth, log)
	if err != nil {
		return err
	}
	defer bus.Drain(nc, 10*time.Second) // replies in flight are flushed before exit
	shutdownTracing, err := telemetry.SetupTracing(ctx, "perpgate-keys", os.LookupEnv)
	if err != nil {
		return err
	}
	defer shutdownTracing(context.WithoutCancel(ctx))
	checks := map[string]health.Check{"nats": health.NATSCheck(nc)}
	if p, ok := store.(interface{ Ping(context.Context) error }); ok {
		checks["postgres"] = p.Ping
	}
	stopHealth, err := health.Serve(ctx, cfg.HealthAddr, health.Handler(checks, telemetry.NewMetrics().Handler()), log)
	if err != nil {
		return err
	}
	defer stopHealth()
	svc, err := keys.New(cfg, nc, store, log, nil)
	if err != nil {
		return err
	}
	return svc.Run(ctx)
}
