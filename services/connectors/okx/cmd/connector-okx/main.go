// Command connector-okx serves the OKX v5 USDT-margined swap operations on
// NATS.
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
	"github.com/perpgate/perpgate/services/connectors/okx"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "connector-okx:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	logCfg, err1 := telemetry.LoadLogConfig(os.LookupEnv, "json")
	svcCfg, err2 := connector.LoadServiceConfig(os.LookupEnv)
	cfg, err3 := okx.LoadConfig(os.LookupEnv)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	log := telemetry.NewLogger(os.Stdout, logCfg)
	telemetry.RouteRedisLogs(log)
	log.Info("connector-okx starting", "version", version)
	return connector.Serve(ctx, svcCfg, okx.NewAdapter(cfg, nil), log)
}
