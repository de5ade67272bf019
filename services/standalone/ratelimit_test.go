package standalone

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/edge"
	"github.com/perpgate/perpgate/services/keys"
)

// startEdgeReplica runs one more edge on the gateway's bus, rate limited in
// Redis under prefix with the given clock, as an operator runs several.
func startEdgeReplica(t *testing.T, g *testGateway, name, prefix string, clock *testenv.Clock, mutate ...func(*edge.Config)) string {
	t.Helper()
	nc, err := g.Connect(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := edge.DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	for _, m := range mutate {
		m(&cfg)
	}
	limiter := ratelimit.NewRedis(testenv.Redis(t), prefix, clock.Now)
	srv, err := edge.New(cfg, edge.Deps{NATS: nc, Limiter: limiter, Logger: slog.New(slog.NewJSONHandler(g.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	// Client connections dialed but never used look new to the server,
	// which waits 5 s for them at shutdown: close them first.
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	return "http://" + srv.Addr().String()
}

// TestRateLimitAcrossEdges: 200 concurrent requests with one free key,
// spread over two edges sharing Redis, give exactly the tier's 30 per
// minute; refusals consume nothing; the day window starts over at UTC
// midnight.
func TestRateLimitAcrossEdges(t *testing.T) {
	g := startGateway(t)
	_, prefix := testenv.RedisPrefix(t)
	clock := testenv.NewClock(time.Date(2026, 11, 23, 23, 59, 20, 0, time.UTC))
	edges := []string{
		startEdgeReplica(t, g, "edge-a", prefix, clock),
		startEdgeReplica(t, g, "edge-b", prefix, clock),
	}
	acct := g.newAccount(contract.TierFree)
	cred := g.newCredential(acct, contract.Paper, contract.Testnet, `{}`)
	key := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest})
	body := []byte(`{"operation":"getMarkPrice","credentialId":"` + cred + `","market":"BTC"}`)
	free := contract.TierFree.Limits()

	post := func(base string) (int, http.Header, error) { return postKey(base, key, body) }

	// Watch the key look-ups the burst causes: each cold edge asks once.
	var lookups atomic.Int32
	watch, err := g.Connect("lookup-watch")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Subscribe(contract.NewSubjects("").KeyLookup(), func(*nats.Msg) { lookups.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}

	const n = 200
	statuses := make([]int, n)
	headers := make([]http.Header, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, h, err := post(edges[i%2])
			if err != nil {
				t.Errorf("request %d: %v", i, err)
			}
			statuses[i], headers[i] = s, h
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	t.Logf("%d concurrent requests answered in %s", n, time.Since(began).Round(time.Millisecond))

	count := map[int]int{}
	perEdge := map[int]int{}
	for i, s := range statuses {
		count[s]++
		if s == http.StatusOK {
			perEdge[i%2]++
		}
		if s == http.StatusTooManyRequests && headers[i].Get("Retry-After") != "40" {
			t.Errorf("request %d: Retry-After = %q at hh:mm:20, want 40", i, headers[i].Get("Retry-After"))
		}
		if s == http.StatusOK && headers[i].Get("Retry-After") != "" {
			t.Errorf("request %d: Retry-After on a success", i)
		}
	}
	if count[http.StatusOK] != free.PerMinute || count[http.StatusTooManyRequests] != n-free.PerMinute {
		t.Fatalf("statuses %v, want %d × 200 and %d × 429", count, free.PerMinute, n-free.PerMinute)
	}
	t.Logf("successes per edge: %v", perEdge)
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := lookups.Load(); got != int32(len(edges)) {
		t.Errorf("the burst caused %d key look-ups, want one per edge (%d)", got, len(edges))
	}

	// Refusals consumed nothing: the day counter holds the 30 successes.
	s, h, err := post(edges[0])
	if err != nil || s != http.StatusTooManyRequests {
		t.Fatalf("after the burst: %d, %v", s, err)
	}
	wantHeaders(t, h, map[string]int{
		edge.HeaderLimitMinute: free.PerMinute, edge.HeaderRemainingMinute: 0,
		edge.HeaderLimitDay: free.PerDay, edge.HeaderRemainingDay: free.PerDay - free.PerMinute,
	})

	// At UTC midnight both windows start over.
	clock.Set(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	s, h, err = post(edges[1])
	if err != nil || s != http.StatusOK {
		t.Fatalf("after midnight: %d, %v", s, err)
	}
	wantHeaders(t, h, map[string]int{
		edge.HeaderRemainingMinute: free.PerMinute - 1, edge.HeaderRemainingDay: free.PerDay - 1,
	})
}

// TestDayWindow: with the day quota spent, requests are refused until UTC
// midnight, whatever the minute window says.
func TestDayWindow(t *testing.T) {
	g := startGateway(t)
	_, prefix := testenv.RedisPrefix(t)
	clock := testenv.NewClock(time.Date(2026, 11, 23, 23, 57, 10, 0, time.UTC))
	base := startEdgeReplica(t, g, "edge-day", prefix, clock, func(c *edge.Config) {
		c.TierLimits[contract.TierFree] = contract.TierLimits{PerMinute: 3, PerDay: 5}
	})
	acct := g.newAccount(contract.TierFree)
	cred := g.newCredential(acct, contract.Paper, contract.Testnet, `{}`)
	key := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest})
	body := []byte(`{"operation":"getMarkPrice","credentialId":"` + cred + `","market":"BTC"}`)
	expect := func(at string, status int, retryAfter string) http.Header {
		t.Helper()
		now, err := time.Parse(time.RFC3339, at)
		if err != nil {
			t.Fatal(err)
		}
		clock.Set(now)
		s, h, err := postKey(base, key, body)
		if err != nil || s != status || h.Get("Retry-After") != retryAfter {
			t.Fatalf("at %s: %d Retry-After %q (%v), want %d Retry-After %q", at, s, h.Get("Retry-After"), err, status, retryAfter)
		}
		if got, want := h.Get("RateLimit-Policy"), `"minute";q=3;w=60, "day";q=5;w=86400`; got != want {
			t.Fatalf("at %s: RateLimit-Policy %q, want %q", at, got, want)
		}
		return h
	}
	ietf := func(h http.Header, want string) {
		t.Helper()
		if got := h.Get("RateLimit"); got != want {
			t.Fatalf("RateLimit %q, want %q", got, want)
		}
	}
	ietf(expect("2026-11-23T23:57:10Z", http.StatusOK, ""), `"minute";r=2;t=50, "day";r=4;t=170`)
	expect("2026-11-23T23:57:11Z", http.StatusOK, "")
	expect("2026-11-23T23:57:12Z", http.StatusOK, "")
	ietf(expect("2026-11-23T23:57:13Z", http.StatusTooManyRequests, "47"), `"minute";r=0;t=47, "day";r=2;t=167`) // minute full
	expect("2026-11-23T23:58:00Z", http.StatusOK, "")
	expect("2026-11-23T23:58:01Z", http.StatusOK, "")
	ietf(expect("2026-11-23T23:59:30Z", http.StatusTooManyRequests, "30"), `"minute";r=3;t=30, "day";r=0;t=30`) // day full: wait for midnight
	expect("2026-11-23T23:59:59Z", http.StatusTooManyRequests, "1")
	expect("2026-11-24T00:00:00Z", http.StatusOK, "")
}

func postKey(base, key string, body []byte) (int, http.Header, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/v1", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header, nil
}

func wantHeaders(t *testing.T, h http.Header, want map[string]int) {
	t.Helper()
	for name, n := range want {
		if got := h.Get(name); got != strconv.Itoa(n) {
			t.Errorf("%s = %q, want %d", name, got, n)
		}
	}
}
