package standalone

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/perpgate/perpgate/pkg/contract"
)

// BenchOptions sizes `perpgate bench`.
type BenchOptions struct {
	Concurrency int           // workers for the throughput runs
	Duration    time.Duration // per throughput run
	Warmup      time.Duration
	C1Duration  time.Duration // the concurrency-1 latency run
	CPUProfile  string        // when set, a CPU profile of the gateway run is written here
}

// DefaultBenchOptions keeps `make bench` well under two minutes.
func DefaultBenchOptions() BenchOptions {
	return BenchOptions{Concurrency: 32, Duration: 8 * time.Second, Warmup: time.Second, C1Duration: 3 * time.Second}
}

// loadResult is what one load run measured.
type loadResult struct {
	requests, failures int
	elapsed            time.Duration
	latencies          []time.Duration
}

func (r loadResult) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func (r loadResult) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, int(float64(len(r.latencies))*p))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d.Microseconds())/1000) }

// Bench drives the standalone gateway on the paper exchange and a bare Echo
// JSON handler with the same load generator, and prints the comparison
// ending with the DESIGN §11 line.
func Bench(ctx context.Context, out io.Writer, opts BenchOptions, dataDir string) error {
	cfg := DefaultConfig()
	cfg.DataDir = dataDir
	cfg.AdminAddr = "127.0.0.1:0"
	cfg.Edge.ListenAddr = "127.0.0.1:0"
	// The limiter still runs on every request; the bench key just never hits it.
	cfg.Edge.TierLimits[contract.TierBuilder] = contract.TierLimits{PerMinute: 1 << 30, PerDay: 1 << 30, MaxKeys: 10}
	gw, err := New(cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		return err
	}
	if err := gw.Start(ctx); err != nil {
		return err
	}
	defer gw.Close()
	bare, bareURL, err := startBare()
	if err != nil {
		return err
	}
	defer bare.Close()

	boot := gw.Bootstrap()
	body := fmt.Appendf(nil, `{"operation":"getMarkPrice","credentialId":%q,"market":"BTC-USD-PERP"}`, boot.CredentialID)
	gwTarget := target{url: gw.URL() + "/v1", key: boot.APIKey, body: body}
	bareTarget := target{url: bareURL + "/v1", key: boot.APIKey, body: body}

	fmt.Fprintf(out, "bench: concurrency %d, %s per run, getMarkPrice on paper\n", opts.Concurrency, opts.Duration)
	run(ctx, gwTarget, opts.Concurrency, opts.Warmup)
	stopProfile, err := startProfile(opts.CPUProfile)
	if err != nil {
		return err
	}
	g := run(ctx, gwTarget, opts.Concurrency, opts.Duration)
	stopProfile()
	run(ctx, bareTarget, opts.Concurrency, opts.Warmup)
	b := run(ctx, bareTarget, opts.Concurrency, opts.Duration)
	c1 := run(ctx, gwTarget, 1, opts.C1Duration)
	for _, row := range []struct {
		name string
		r    loadResult
	}{{"gateway", g}, {"bare echo", b}, {"gateway c=1", c1}} {
		fmt.Fprintf(out, "  %-12s %8d req %5d failed %10.0f req/s  p50 %s ms  p99 %s ms\n",
			row.name, row.r.requests, row.r.failures, row.r.rps(), ms(row.r.percentile(0.5)), ms(row.r.percentile(0.99)))
	}
	if g.failures > 0 || b.failures > 0 || c1.failures > 0 {
		return fmt.Errorf("bench saw failed requests: gateway %d, bare %d, c1 %d", g.failures, b.failures, c1.failures)
	}
	fmt.Fprintf(out, "bench: gateway_rps=%.0f bare_rps=%.0f ratio=%.2f p50_ms=%s p99_ms=%s c1_p50_ms=%s\n",
		g.rps(), b.rps(), g.rps()/b.rps(), ms(g.percentile(0.5)), ms(g.percentile(0.99)), ms(c1.percentile(0.5)))
	return nil
}

type target struct {
	url, key string
	body     []byte
}

// startBare serves the smallest honest Echo JSON handler: it decodes the
// body and answers a fixed mark price.
func startBare() (*http.Server, string, error) {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.POST("/v1", func(c echo.Context) error {
		var req map[string]any
		if err := c.Bind(&req); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"success": true, "markPrice": "60000", "indexPrice": "60000"})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: e}
	go func() { _ = srv.Serve(ln) }()
	return srv, "http://" + ln.Addr().String(), nil
}

// run sends requests from n workers for d and collects latencies.
func run(ctx context.Context, t target, n int, d time.Duration) loadResult {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true}}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var total loadResult
	var wg sync.WaitGroup
	start := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local loadResult
			for ctx.Err() == nil {
				t0 := time.Now()
				ok := once(ctx, client, t)
				if ctx.Err() != nil {
					break
				}
				local.requests++
				if !ok {
					local.failures++
				}
				local.latencies = append(local.latencies, time.Since(t0))
			}
			mu.Lock()
			total.requests += local.requests
			total.failures += local.failures
			total.latencies = append(total.latencies, local.latencies...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	total.elapsed = time.Since(start)
	slices.Sort(total.latencies)
	return total
}

func once(ctx context.Context, client *http.Client, t target) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(t.body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", t.key)
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
