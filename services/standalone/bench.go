package standalone

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// BenchOptions sizes `perpgate bench`.
type BenchOptions struct {
	Concurrency int           // connections of the throughput runs
	Duration    time.Duration // per throughput run
	Warmup      time.Duration
	C1Duration  time.Duration // the concurrency-1 latency run
	Rounds      int           // gateway and bare runs alternate this many times
	PlaceCount  int           // placements of the concurrency-1 placement run (place_flat_ratio), at least 2,000
	CPUProfile  string        // when set, the gateway process writes a CPU profile here, and each distributed process to CPUProfile.<name>
	// Exe is the perpgate binary run as the targets and the load generator;
	// empty means this process's own executable.
	Exe string
}

// DefaultBenchOptions keeps `make bench` around a minute.
func DefaultBenchOptions() BenchOptions {
	return BenchOptions{Concurrency: 64, Duration: 5 * time.Second, Warmup: time.Second, C1Duration: 3 * time.Second, Rounds: 3,
		PlaceCount: 10000}
}

// benchResult is what one load generator run measured; it is the JSON
// line `perpgate loadgen` prints.
type benchResult struct {
	Requests int `json:"requests"`
	Failures int `json:"failures"`
	// FailedBy counts the failures by what the answer said ("502
	// EXCHANGE_ERROR", "read: EOF"), so a soak's failures can be explained.
	FailedBy map[string]int `json:"failedBy,omitempty"`
	RPS      float64        `json:"rps"`
	P50      float64        `json:"p50Ms"`
	P99      float64        `json:"p99Ms"`
	// FirstP50 and LastP50 are the p50 of the first and the last
	// flatWindow requests of a concurrency-1 run of at least twice as many.
	FirstP50 float64 `json:"firstP50Ms,omitempty"`
	LastP50  float64 `json:"lastP50Ms,omitempty"`
}

// Bench measures the standalone gateway (a `perpgate serve` process on the
// paper exchange) against a bare Echo JSON handler (a process of its own),
// with load from separate load generator processes, so that no target
// shares a Go runtime with what loads it. It prints the comparison and
// ends with the DESIGN §11/§12 line.
func Bench(ctx context.Context, out io.Writer, opts BenchOptions, dataDir string) error {
	exe := opts.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("bench: find own binary: %w", err)
		}
	}
	gwAddr, adminAddr, bareAddr, err := freeAddrs()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "PERPGATE_DATA_DIR="+dataDir, "PERPGATE_LISTEN_ADDR="+gwAddr, "PERPGATE_ADMIN_ADDR="+adminAddr,
		// The limiter still runs on every request; the bench key never hits it.
		"PERPGATE_TIER_LIMITS_BUILDER=1000000000/1000000000", "PERPGATE_LOG_LEVEL=warn", "PERPGATE_NATS_URL=",
		"PERPGATE_REDIS_URL=", "PERPGATE_DATABASE_URL=")
	if opts.CPUProfile != "" {
		env = append(env, "PERPGATE_CPU_PROFILE="+opts.CPUProfile)
	}
	stopServe, servePID, err := startChildPID(ctx, exe, env, "serve")
	if err != nil {
		return err
	}
	defer stopServe()
	stopBare, err := startChild(ctx, exe, os.Environ(), "bench-target", "--addr", bareAddr)
	if err != nil {
		return err
	}
	defer stopBare()
	skelAddr, _, _, err := freeAddrs()
	if err != nil {
		return err
	}
	stopSkel, err := startChild(ctx, exe, os.Environ(), "bench-target", "--mode", "skeleton", "--addr", skelAddr)
	if err != nil {
		return err
	}
	defer stopSkel()
	for _, addr := range []string{gwAddr, bareAddr, skelAddr} {
		if err := waitReady(ctx, "http://"+addr+"/healthz"); err != nil {
			return err
		}
	}
	var boot Bootstrap
	b, err := os.ReadFile(filepath.Join(dataDir, "bootstrap.json"))
	if err == nil {
		err = json.Unmarshal(b, &boot)
	}
	if err != nil {
		return fmt.Errorf("bench: read the gateway's bootstrap.json: %w", err)
	}
	read := fmt.Sprintf(`{"operation":"getMarkPrice","credentialId":%q,"market":"BTC-USD-PERP"}`, boot.CredentialID)
	gw := loadTarget{url: "http://" + gwAddr + "/v1", key: boot.APIKey, body: read}
	bare := loadTarget{url: "http://" + bareAddr + "/v1", key: boot.APIKey, body: read}
	skel := loadTarget{url: "http://" + skelAddr + "/v1", key: boot.APIKey, body: read}
	load := func(t loadTarget, n int, d time.Duration, mode string) (benchResult, error) {
		return runLoadgen(ctx, exe, t, n, d, mode, boot.CredentialID)
	}

	fmt.Fprintf(out, "bench: load from separate processes, %d connections, %s per run, %d rounds, getMarkPrice on paper\n",
		opts.Concurrency, opts.Duration, opts.Rounds)
	if _, err := load(gw, opts.Concurrency, opts.Warmup, "read"); err != nil {
		return err
	}
	if _, err := load(bare, opts.Concurrency, opts.Warmup, "read"); err != nil {
		return err
	}
	if _, err := load(skel, opts.Concurrency, opts.Warmup, "read"); err != nil {
		return err
	}
	// The raw pipeline and the distributed deployment need the local NATS,
	// Redis and Postgres; without them those modes say so and count 0.
	var pipe, dist *loadTarget
	var distMetrics, distCred string
	if missing := localServicesMissing(); missing != "" {
		fmt.Fprintf(out, "bench: pipe and dist not measured: %s\n", missing)
	} else {
		pipeAddr, _, _, err := freeAddrs()
		if err != nil {
			return err
		}
		stopPipe, err := startChild(ctx, exe, os.Environ(), "bench-target", "--mode", "pipe", "--addr", pipeAddr)
		if err != nil {
			return err
		}
		defer stopPipe()
		if err := waitReady(ctx, "http://"+pipeAddr+"/healthz"); err != nil {
			return err
		}
		pipe = &loadTarget{url: "http://" + pipeAddr + "/v1", key: boot.APIKey, body: read}
		d, err := startDist(ctx, exe, dataDir, opts.CPUProfile)
		if err != nil {
			fmt.Fprintf(out, "bench: dist not measured: %v\n", err)
		} else {
			defer d.Close()
			distMetrics, distCred = d.Metrics, d.Credential
			dist = &loadTarget{url: d.URL, key: d.Key,
				body: fmt.Sprintf(`{"operation":"getMarkPrice","credentialId":%q,"market":"BTC-USD-PERP"}`, d.Credential)}
			if _, err := runLoadgen(ctx, exe, *dist, opts.Concurrency, opts.Warmup, "read", d.Credential); err != nil {
				return err
			}
		}
	}
	// Goroutines after the warm-up against the end: the runs must not leak.
	goroutinesBefore, err := metric(ctx, "http://"+gwAddr+"/metrics", "go_goroutines")
	if err != nil {
		return err
	}
	var g, bb, ss, pp, dd []benchResult
	for range max(opts.Rounds, 1) {
		r, err := load(gw, opts.Concurrency, opts.Duration, "read")
		if err != nil {
			return err
		}
		g = append(g, r)
		if r, err = load(bare, opts.Concurrency, opts.Duration, "read"); err != nil {
			return err
		}
		bb = append(bb, r)
		if r, err = load(skel, opts.Concurrency, opts.Duration, "read"); err != nil {
			return err
		}
		ss = append(ss, r)
		if pipe != nil {
			if r, err = load(*pipe, opts.Concurrency, opts.Duration, "read"); err != nil {
				return err
			}
			pp = append(pp, r)
		}
		if dist != nil {
			if r, err = load(*dist, opts.Concurrency, opts.Duration, "read"); err != nil {
				return err
			}
			dd = append(dd, r)
		}
	}
	// The c=1 run reads the paper stream's view: the warm-up subscribed
	// BTC-USD-PERP. Its p99 is cached_p99_ms when no read in it went to
	// the venue (perpgate_stream_reads_total{source="rest"} unchanged).
	restBefore, err := streamRESTReads(ctx, "http://"+gwAddr+"/metrics")
	if err != nil {
		return err
	}
	c1, err := load(gw, 1, opts.C1Duration, "read")
	if err != nil {
		return err
	}
	restAfter, err := streamRESTReads(ctx, "http://"+gwAddr+"/metrics")
	if err != nil {
		return err
	}
	cachedP99 := c1.P99
	if restAfter != restBefore {
		fmt.Fprintf(out, "bench: %v of the c=1 reads went to the venue, not the stream: cached_p99_ms=0\n", restAfter-restBefore)
		cachedP99 = 0
	}
	var dc1 benchResult
	if dist != nil {
		before, err := streamRESTReads(ctx, distMetrics)
		if err != nil {
			return err
		}
		if dc1, err = load(*dist, 1, opts.C1Duration, "read"); err != nil {
			return err
		}
		after, err := streamRESTReads(ctx, distMetrics)
		if err != nil {
			return err
		}
		if after != before {
			fmt.Fprintf(out, "bench: %v of the dist c=1 reads went to the venue, not connector-paper's stream view\n", after-before)
		}
	}
	// The references at c=1 too: what the c=1 figures above cost on this
	// machine before any gateway work.
	bc1, err := load(bare, 1, opts.C1Duration, "read")
	if err != nil {
		return err
	}
	sc1, err := load(skel, 1, opts.C1Duration, "read")
	if err != nil {
		return err
	}
	var pc1 benchResult
	if pipe != nil {
		if pc1, err = load(*pipe, 1, opts.C1Duration, "read"); err != nil {
			return err
		}
	}
	place, err := load(gw, max(opts.Concurrency/8, 1), opts.Duration, "place-cancel")
	if err != nil {
		return err
	}
	// Event latency: fills at 100 placements a second, to an SSE client.
	eventP50, eventP99, err := measureEvents(ctx, "http://"+gwAddr, boot.APIKey, boot.CredentialID, opts.C1Duration)
	if err != nil {
		return err
	}
	pf, err := benchPlacements(ctx, exe, gw, boot.CredentialID, dist, distCred, opts)
	if err != nil {
		return err
	}
	goroutinesAfter, err := settledGoroutines(ctx, "http://"+gwAddr+"/metrics", goroutinesBefore)
	if err != nil {
		return err
	}
	rss := rssMiB(servePID)
	gm, bm, sm, pm, dm := median(g), median(bb), median(ss), median(pp), median(dd)
	rows := []struct {
		name string
		r    benchResult
	}{{"gateway", gm}, {"bare echo", bm}, {"skeleton", sm}, {"pipe", pm}, {"dist", dm}, {"gateway c=1", c1},
		{"dist c=1", dc1}, {"bare c=1", bc1}, {"skeleton c=1", sc1}, {"pipe c=1", pc1}, {"place+cancel", place},
		{"place c=1", pf.c1}, {fmt.Sprintf("place c=%d", opts.Concurrency), pf.many}, {"dist place c=1", pf.distC1}}
	for _, row := range rows {
		fmt.Fprintf(out, "  %-14s %8d req %5d failed %10.0f req/s  p50 %.3f ms  p99 %.3f ms\n",
			row.name, row.r.Requests, row.r.Failures, row.r.RPS, row.r.P50, row.r.P99)
	}
	fmt.Fprintf(out, "  place c=1: p50 %.3f ms over the first %d placements, %.3f ms over the last %d\n",
		pf.c1.FirstP50, flatWindow, pf.c1.LastP50, flatWindow)
	fmt.Fprintf(out, "  cached_p99_ms: the gateway c=1 run, every read answered from the paper stream's view: %.3f\n", cachedP99)
	fmt.Fprintf(out, "  event_p50_ms/event_p99_ms: placement sent to its fill read on GET /v1/events, %d a second: %.3f / %.3f\n",
		eventRate, eventP50, eventP99)
	fmt.Fprintf(out, "  perpgate serve after the runs: RSS %.0f MiB; goroutines %.0f after the warm-up, %.0f at the end\n",
		rss, goroutinesBefore, goroutinesAfter)
	for _, row := range rows {
		if row.r.Failures > 0 {
			return fmt.Errorf("bench saw %d failed requests in the %s run (%s)", row.r.Failures, row.name, countsText(row.r.FailedBy))
		}
	}
	distRatio := 0.0
	if pm.RPS > 0 {
		distRatio = dm.RPS / pm.RPS
	}
	fmt.Fprintf(out, "bench: gateway_rps=%.0f bare_rps=%.0f ratio=%.2f p50_ms=%.3f p99_ms=%.3f c1_p50_ms=%.3f "+
		"pipe_rps=%.0f dist_rps=%.0f dist_ratio=%.2f dist_c1_p50_ms=%.3f place_rps=%.0f cached_p99_ms=%.3f rss_mib=%.0f "+
		"bare_c1_p50_ms=%.3f pipe_c1_p50_ms=%.3f skel_rps=%.0f skel_c1_p50_ms=%.3f event_p50_ms=%.3f event_p99_ms=%.3f "+
		"place_c1_p50_ms=%.3f place_c64_rps=%.0f place_flat_ratio=%.2f dist_place_c1_p50_ms=%.3f\n",
		gm.RPS, bm.RPS, gm.RPS/bm.RPS, gm.P50, gm.P99, c1.P50, pm.RPS, dm.RPS, distRatio, dc1.P50, place.RPS, cachedP99, rss,
		bc1.P50, pc1.P50, sm.RPS, sc1.P50, eventP50, eventP99, pf.c1.P50, pf.many.RPS, pf.flatRatio(), pf.distC1.P50)
	return nil
}

// settledGoroutines reads go_goroutines at url until it is at most want
// or two seconds have passed: serve ends a connection's goroutine only
// when it reads the close of a load generator that has just exited.
func settledGoroutines(ctx context.Context, url string, want float64) (float64, error) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		n, err := metric(ctx, url, "go_goroutines")
		if err != nil || n <= want || time.Now().After(deadline) {
			return n, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// streamRESTReads is the count of paper getMarkPrice reads the venue
// answered instead of the stream view, from the /metrics at url of the
// gateway or of connector-paper.
func streamRESTReads(ctx context.Context, url string) (float64, error) {
	return metric(ctx, url, `perpgate_stream_reads_total{exchange="paper",operation="getMarkPrice",source="rest"}`)
}

// metric reads one series from the Prometheus text at url; 0 when absent.
func metric(ctx context.Context, url, series string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("bench: read %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("bench: read %s: %w", url, err)
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, nil
}

// localServicesMissing names the local services the pipe and dist modes
// need that do not answer, or "".
func localServicesMissing() string {
	var missing []string
	for name, addr := range map[string]string{"NATS": "127.0.0.1:4222", "Redis": "127.0.0.1:6379", "Postgres": "127.0.0.1:5432"} {
		c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err != nil {
			missing = append(missing, name+" at "+addr)
			continue
		}
		c.Close()
	}
	if len(missing) == 0 {
		return ""
	}
	return strings.Join(missing, ", ") + " not reachable"
}

// median is the rounds of one mode as one result: the median of each
// figure (a round that met a noisy neighbour moves a mean, not a median)
// and the requests and failures of all.
func median(rs []benchResult) benchResult {
	var m benchResult
	if len(rs) == 0 {
		return m
	}
	for _, r := range rs {
		m.Requests += r.Requests
		m.Failures += r.Failures
		m.FailedBy = addCounts(m.FailedBy, r.FailedBy)
	}
	mid := func(field func(benchResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = field(r)
		}
		slices.Sort(v)
		if len(v)%2 == 0 {
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		return v[len(v)/2]
	}
	m.RPS = mid(func(r benchResult) float64 { return r.RPS })
	m.P50 = mid(func(r benchResult) float64 { return r.P50 })
	m.P99 = mid(func(r benchResult) float64 { return r.P99 })
	return m
}

// loadTarget is what a load generator sends.
type loadTarget struct{ url, key, body string }

func runLoadgen(ctx context.Context, exe string, t loadTarget, n int, d time.Duration, mode, cred string, more ...string) (benchResult, error) {
	args := []string{"loadgen", "--url", t.url, "--key", t.key, "--body", t.body,
		"--concurrency", strconv.Itoa(n), "--duration", d.String(), "--mode", mode, "--credential", cred}
	cmd := exec.CommandContext(ctx, exe, append(args, more...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return benchResult{}, fmt.Errorf("bench: load generator: %w: %s", err, stderr.String())
	}
	var r benchResult
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("bench: load generator printed %q: %w", b, err)
	}
	return r, nil
}

// startChild runs exe with args as a child process and returns how to stop it.
func startChild(ctx context.Context, exe string, env []string, args ...string) (func(), error) {
	stop, _, err := startChildPID(ctx, exe, env, args...)
	return stop, err
}

// startChildPID is startChild that also returns the child's process id.
func startChildPID(ctx context.Context, exe string, env []string, args ...string) (func(), int, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("bench: start %s: %w", strings.Join(args, " "), err)
	}
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}, cmd.Process.Pid, nil
}

// rssMiB is the resident set of process pid in MiB (Linux), or 0.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

func freeAddrs() (string, string, string, error) {
	var out [3]string
	for i := range out {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", "", "", err
		}
		out[i] = ln.Addr().String()
		ln.Close()
	}
	return out[0], out[1], out[2], nil
}

func waitReady(ctx context.Context, url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("bench: %s not ready within 30 s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ServeBare serves the smallest honest Echo JSON handler on addr until ctx
// ends: it decodes the body and answers a fixed mark price. It is the
// bench's baseline (`perpgate bench-target`).
func ServeBare(ctx context.Context, addr string) error {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.POST("/v1", func(c echo.Context) error {
		var req map[string]any
		if err := c.Bind(&req); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"success": true, "markPrice": "60000", "indexPrice": "60000"})
	})
	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]any{"success": true}) })
	srv := &http.Server{Addr: addr, Handler: e, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// addCounts adds b's counts to a, making a when it is nil.
func addCounts(a, b map[string]int) map[string]int {
	for k, n := range b {
		if a == nil {
			a = map[string]int{}
		}
		a[k] += n
	}
	return a
}

// countsText lists counts largest first: "3 × 502 EXCHANGE_ERROR, 1 × read: EOF".
func countsText(c map[string]int) string {
	keys := slices.Collect(maps.Keys(c))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(c[b]-c[a], strings.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d × %s", c[k], k)
	}
	return strings.Join(parts, ", ")
}
