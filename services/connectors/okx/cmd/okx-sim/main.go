// Command okx-sim serves a simulated OKX v5 REST API for USDT-margined
// swaps (package sim) on the paper engine, as a local stand-in for OKX:
// point PERPGATE_OKX_URL at it.
//
//	PERPGATE_OKX_SIM_ADDR  listen address (default 127.0.0.1:8096)
//	PERPGATE_OKX_SIM_KEYS  apiKey:apiSecret:passphrase[:demo] entries, comma
//	                       separated; :demo marks a demo-trading key
//	                       (default sim-api-key:sim-api-secret:sim-passphrase
//	                       and sim-demo-key:sim-demo-secret:sim-passphrase:demo)
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

	"github.com/perpgate/perpgate/services/connectors/okx/sim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "okx-sim:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	addr := envOr("PERPGATE_OKX_SIM_ADDR", "127.0.0.1:8096")
	keys := map[string]sim.Key{}
	def := "sim-api-key:sim-api-secret:sim-passphrase,sim-demo-key:sim-demo-secret:sim-passphrase:demo"
	for _, entry := range strings.Split(envOr("PERPGATE_OKX_SIM_KEYS", def), ",") {
		f := strings.Split(strings.TrimSpace(entry), ":")
		if len(f) < 3 || len(f) > 4 || f[0] == "" || f[1] == "" || f[2] == "" || (len(f) == 4 && f[3] != "demo") {
			return errors.New("PERPGATE_OKX_SIM_KEYS must be apiKey:apiSecret:passphrase[:demo] entries separated by commas")
		}
		keys[f[0]] = sim.Key{Secret: f[1], Passphrase: f[2], Demo: len(f) == 4}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: sim.New(sim.Config{Keys: keys}), ReadHeaderTimeout: 5 * time.Second}
	log := slog.New(slog.NewTextHandler(os.Stdout, nil))
	log.Info("okx simulator listening", "url", "http://"+ln.Addr().String(), "api_keys", len(keys))
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
