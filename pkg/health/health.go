// Package health serves the operational endpoints every perpgate process
// exposes: /healthz (the process is alive), /readyz (its dependencies
// answer) and /metrics (Prometheus).
package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Check reports whether one dependency is usable.
type Check func(ctx context.Context) error

// NATSCheck is ready while the connection is connected.
func NATSCheck(nc *nats.Conn) Check {
	return func(context.Context) error {
		if !nc.IsConnected() {
			return errors.New("not connected")
		}
		return nil
	}
}

// Handler answers /healthz, /readyz (running every check, 2 s bound, and
// naming each failed check with its error) and, when metrics is not nil,
// /metrics. It is for the health port, which only operators reach.
func Handler(checks map[string]Check, metrics http.Handler) http.Handler {
	return handler(checks, metrics, true)
}

// PublicHandler answers /healthz and /readyz for a port clients reach:
// ready or not ready, without the names, addresses or errors of the
// checks (those are on the health port).
func PublicHandler(checks map[string]Check) http.Handler {
	return handler(checks, nil, false)
}

func handler(checks map[string]Check, metrics http.Handler, detail bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		failed := run(ctx, checks)
		if len(failed) > 0 {
			var detailOrNot any = "not ready"
			if detail {
				detailOrNot = failed
			}
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"success": false, "code": "NOT_READY", "error": detailOrNot})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "status": "ready"})
	})
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	return mux
}

// run executes the checks concurrently and returns "name: error" for each
// failure, sorted.
func run(ctx context.Context, checks map[string]Check) []string {
	var mu sync.Mutex
	var wg sync.WaitGroup
	failed := []string{}
	for name, check := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := check(ctx); err != nil {
				mu.Lock()
				failed = append(failed, fmt.Sprintf("%s: %v", name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Strings(failed)
	return failed
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Serve listens on addr (a taken port fails here) and serves h until ctx
// ends. An empty addr serves nothing.
func Serve(ctx context.Context, addr string, h http.Handler, log *slog.Logger) (func() error, error) {
	if addr == "" {
		return func() error { return nil }, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health listener on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("health server stopped", "err", err)
		}
	}()
	log.Info("health endpoints listening", "addr", ln.Addr().String())
	return func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	}, nil
}
