// Command paper-venue runs the paper exchange itself: the one place paper
// orders, positions and balances live, served over HTTP to connector-paper.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/gcfloor"
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
	stopGCFloor, err := gcfloor.Start(os.LookupEnv)
	if err != nil {
		return err
	}
	defer stopGCFloor()
	healthAddr, ok := os.LookupEnv("PERPGATE_HEALTH_ADDR")
	if !ok {
		healthAddr = ":8082"
	}
	checks := map[string]health.Check{}
	journal, records, closeJournal, err := openJournal(ctx, log, checks)
	if err != nil {
		return err
	}
	defer closeJournal()
	engine, err := paper.Reopen(paper.Config{Seed: seed, Log: log}, journal, records)
	if err != nil {
		return err
	}
	log.Info("paper state restored", "records", len(records))
	stopHealth, err := health.Serve(ctx, healthAddr, health.Handler(checks, telemetry.NewMetrics().Handler()), log)
	if err != nil {
		return err
	}
	defer stopHealth()
	v, err := venue.New(cfg, engine, log)
	if err != nil {
		return err
	}
	stopEvents, err := publishEvents(ctx, engine, log)
	if err != nil {
		return err
	}
	defer stopEvents()
	return v.Run(ctx)
}

// publishEvents publishes the venue's private streams, each account's
// raw events, on NATS (PERPGATE_NATS_URL), where connector-paper follows
// them and publishes the account events; without NATS there are none.
func publishEvents(_ context.Context, engine *paper.Engine, log *slog.Logger) (func(), error) {
	url := os.Getenv("PERPGATE_NATS_URL")
	if url == "" {
		log.Warn("PERPGATE_NATS_URL is unset: no account events are published (GET /v1/events stays silent for paper)")
		return func() {}, nil
	}
	auth, err := bus.LoadAuth(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	nc, err := bus.Connect(url, "paper-venue", auth, log)
	if err != nil {
		return nil, err
	}
	stop := venue.PublishAccountFeeds(engine, nc, contract.NewSubjects(os.Getenv("PERPGATE_SUBJECT_PREFIX")), log)
	return func() { stop(); _ = bus.Drain(nc, 5*time.Second) }, nil
}

// openJournal keeps the paper state in Postgres (PERPGATE_DATABASE_URL,
// schema paper) or in PERPGATE_DATA_DIR; with neither it lives in memory
// and is lost at every restart.
func openJournal(ctx context.Context, log *slog.Logger, checks map[string]health.Check) (paper.Journal, [][]byte, func(), error) {
	if url := os.Getenv("PERPGATE_DATABASE_URL"); url != "" {
		j, records, err := paper.OpenPostgresJournal(ctx, url, "paper", log)
		if err != nil {
			return nil, nil, nil, err
		}
		checks["postgres"] = j.Ping
		return j, records, j.Close, nil
	}
	if dir := os.Getenv("PERPGATE_DATA_DIR"); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, nil, fmt.Errorf("PERPGATE_DATA_DIR: %w", err)
		}
		j, records, err := paper.OpenFileJournal(filepath.Join(dir, "paper.journal"))
		if err != nil {
			return nil, nil, nil, err
		}
		return j, records, func() { j.Close() }, nil
	}
	log.Warn("paper state is kept in memory only and lost at every restart: set PERPGATE_DATABASE_URL or PERPGATE_DATA_DIR")
	return nil, nil, func() {}, nil
}
