// Command bybit-sim serves a simulated Bybit v5 REST API (USDT perpetuals)
// (package sim) on the paper engine, as a local stand-in for Bybit:
// point PERPGATE_BYBIT_URL at it.
//
//	PERPGATE_BYBIT_SIM_ADDR  listen address (default 127.0.0.1:8096)
//	PERPGATE_BYBIT_SIM_KEYS  apiKey:apiSecret pairs, comma separated
//	                           (default sim-api-key:sim-api-secret)
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/perpgate/perpgate/services/connectors/bybit/sim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bybit-sim:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	addr := envOr("PERPGATE_BYBIT_SIM_ADDR", "127.0.0.1:8096")
	keys := map[string]string{}
	for _, pair := range strings.Split(envOr("PERPGATE_BYBIT_SIM_KEYS", "sim-api-key:sim-api-secret"), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok || k == "" || v == "" {
			return errors.New("PERPGATE_BYBIT_SIM_KEYS must be apiKey:apiSecret pairs separated by commas")
		}
		keys[k] = v
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: sim.New(sim.Config{Keys: keys}), ReadHeaderTimeout: 5 * time.Second}
	log := slog.New(slog.NewTextHandler(os.Stdout, nil))
	log.Info("bybit simulator listening", "url", "http://"+ln.Addr().String(), "api_keys", len(keys))
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}
