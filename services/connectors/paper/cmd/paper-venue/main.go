// Command paper-venue runs the paper exchange itself: the one place paper
// orders, positions and balances live, served over HTTP to connector-paper.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/perpgate/perpgate/pkg/health"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "paper-venue:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	logCfg, err := telemetry.LoadLogConfig(os.LookupEnv, "json")
	if err != nil {
		return err
	}
	cfg := venue.DefaultConfig()
	if v := os.Getenv("PERPGATE_PAPER_VENUE_ADDR"); v != "" {
		cfg.Addr = v
	}
	seed := int64(1)
	if v := os.Getenv("PERPGATE_PAPER_SEED"); v != "" {
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("PERPGATE_PAPER_SEED: %q is not an integer", v)
		}
	}
	log := telemetry.NewLogger(os.Stdout, logCfg)
	log.Info("paper-venue starting", "version", version)
	healthAddr, ok := os.LookupEnv("PERPGATE_HEALTH_ADDR")
	if !ok {
		healthAddr = ":8082"
	}
	stopHealth, err := health.Serve(ctx, healthAddr, health.Handler(nil, telemetry.NewMetrics().Handler()), log)
	if err != nil {
		return err
	}
	defer stopHealth()
	v, err := venue.New(cfg, paper.New(paper.Config{Seed: seed}), log)
	if err != nil {
		return err
	}
	return v.Run(ctx)
}
