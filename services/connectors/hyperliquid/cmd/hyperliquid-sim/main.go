// Command hyperliquid-sim serves a simulated Hyperliquid (/info,
// /exchange) for local runs: point PERPGATE_HYPERLIQUID_URL at it.
// HYPERLIQUID_SIM_ADDR is the listen address (default 127.0.0.1:8091);
// HYPERLIQUID_SIM_ACCOUNT and HYPERLIQUID_SIM_AGENT (addresses) register a
// funded account and approve the agent on both networks.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	"github.com/shopspring/decimal"
)

func main() {
	if code, done := connector.SimulatorArgs(os.Args[1:], usage, os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "hyperliquid-sim:", err)
		os.Exit(1)
	}
}

const usage = `usage: hyperliquid-sim

A simulated Hyperliquid (/info, /exchange) for local runs; point
PERPGATE_HYPERLIQUID_URL at it. Settings (environment):
  HYPERLIQUID_SIM_ADDR     listen address (default 127.0.0.1:8091)
  HYPERLIQUID_SIM_ACCOUNT  address of a funded account to register
  HYPERLIQUID_SIM_AGENT    agent address that account approves (both networks)
`

func run(ctx context.Context) error {
	addr := os.Getenv("HYPERLIQUID_SIM_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8091"
	}
	s := sim.New(sim.Config{Seed: 1})
	if acct, agent := os.Getenv("HYPERLIQUID_SIM_ACCOUNT"), os.Getenv("HYPERLIQUID_SIM_AGENT"); acct != "" {
		if err := s.AddUser(acct, decimal.NewFromInt(10000)); err != nil {
			return err
		}
		if agent != "" {
			s.ApproveAgent(acct, agent, true)
			s.ApproveAgent(acct, agent, false)
		}
	}
	srv := &http.Server{Addr: addr, Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
