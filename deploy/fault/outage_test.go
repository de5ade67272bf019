package fault

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/redis/go-redis/v9"
)

// policyWait bounds how long a changed eviction policy takes to be seen:
// the services read it every health.RedisPolicyEvery.
const policyWait = 15 * time.Second

// TestRedisThatEvicts (case 11): a Redis whose maxmemory-policy is not
// noeviction, or whose ACL hides the policy, could drop idempotency
// records and rate limit counters: trading calls are refused naming the
// setting, reads go on, and edge and connector report not ready.
func TestRedisThatEvicts(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	opts, _ := redis.ParseURL(c.Redis.URL)
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	n := 0
	place := func() reply {
		n++
		return c.Call(c.APIKey, restingBuy("evict-"+strconv.Itoa(n), "0.01"))
	}
	edgeHealth := "http://" + c.Edge.Field(t, "health endpoints listening", "addr") + "/readyz"
	connHealth := "http://" + c.Connector.Field(t, "health endpoints listening", "addr") + "/readyz"
	// ready polls the health ports (placements would use up the key's
	// rate limit) until both are ready or both are not.
	ready := func(t *testing.T, want bool) {
		t.Helper()
		testenv.Poll(t, "readiness "+strconv.FormatBool(want), policyWait, func() error {
			for _, url := range []string{edgeHealth, connHealth} {
				if status, body := get(t, url); (status == 200) != want {
					return errorf("%s: %d %s", url, status, body)
				}
			}
			return nil
		})
	}
	refused := func(t *testing.T, want ...string) {
		t.Helper()
		ready(t, false)
		r := place()
		if r.Status != http.StatusServiceUnavailable || r.code() != string(contract.CodeServiceUnavailable) {
			t.Fatalf("placement: %d %s, want 503 SERVICE_UNAVAILABLE", r.Status, r.Raw)
		}
		msg, _ := r.Body["error"].(string)
		for _, w := range append(want, "maxmemory-policy") {
			if !contains(msg, w) {
				t.Errorf("message %q does not name %q", msg, w)
			}
		}
		if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
		}
		if r := c.Call(c.APIKey, map[string]any{"operation": "getBalance"}); r.Status != 200 {
			t.Errorf("a read while placements are refused: %d %s", r.Status, r.Raw)
		}
		for _, url := range []string{edgeHealth, connHealth} {
			if status, body := get(t, url); status != 503 || !contains(body, "maxmemory-policy") {
				t.Errorf("health port %s: %d %s, want 503 naming maxmemory-policy", url, status, body)
			}
		}
		if status, _ := get(t, c.EdgeURL+"/readyz"); status != 503 {
			t.Errorf("public /readyz: %d, want 503", status)
		}
	}
	served := func(t *testing.T) {
		t.Helper()
		ready(t, true)
		if r := place(); r.Status != 200 {
			t.Fatalf("placement once ready again: %d %s", r.Status, r.Raw)
		}
	}
	if r := place(); r.Status != 200 {
		t.Fatalf("placement with noeviction: %d %s", r.Status, r.Raw)
	}
	t.Run("volatile-lru", func(t *testing.T) {
		if err := rdb.ConfigSet(ctx, "maxmemory-policy", "volatile-lru").Err(); err != nil {
			t.Fatal(err)
		}
		refused(t, "volatile-lru", "noeviction")
		if err := rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
			t.Fatal(err)
		}
		served(t)
	})
	t.Run("ACL forbids CONFIG GET", func(t *testing.T) {
		if err := rdb.Do(ctx, "ACL", "SETUSER", "default", "-config").Err(); err != nil {
			t.Fatal(err)
		}
		refused(t, "ACL", "+config|get")
		if err := rdb.Do(ctx, "ACL", "SETUSER", "default", "+config").Err(); err != nil {
			t.Fatal(err)
		}
		served(t)
	})
}

// get returns the status and body of a GET.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// TestPostgresOutage (case 12): while the keys service's Postgres is down,
// admin writes, /v1 calls whose key the edge has not cached and a
// connector's secret fetch answer 503 SERVICE_UNAVAILABLE with
// Retry-After, naming the database, never 500.
func TestPostgresOutage(t *testing.T) {
	c := newCluster(t, clusterOptions{Postgres: true})
	fresh, _ := c.newKey() // never used: the edge must look it up
	c.Postgres.Stop()
	unavailable := func(t *testing.T, status int, h http.Header, body map[string]any, raw string) {
		t.Helper()
		if code, _ := body["code"].(string); status != http.StatusServiceUnavailable || code != string(contract.CodeServiceUnavailable) {
			t.Fatalf("got %d %s, want 503 SERVICE_UNAVAILABLE", status, raw)
		}
		if ra, err := strconv.Atoi(h.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("Retry-After = %q", h.Get("Retry-After"))
		}
		if msg, _ := body["error"].(string); !contains(msg, "database (Postgres)") {
			t.Errorf("message %q does not name the database", msg)
		}
	}
	t.Run("admin write", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, c.AdminURL+"/admin/v1/accounts", strings.NewReader(`{"tier":"free","name":"outage"}`))
		req.Header.Set("Authorization", "Bearer "+c.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		unavailable(t, resp.StatusCode, resp.Header, body, string(b))
	})
	t.Run("v1 key look-up", func(t *testing.T) {
		r := c.Call(fresh, map[string]any{"operation": "getBalance"})
		unavailable(t, r.Status, r.Header, r.Body, r.Raw)
	})
	// A new connector has no secret cached; the edge keeps the key and
	// credential. Restarted on t, not the subtest's, so it outlives it.
	c.Connector.Kill()
	c.Connector = c.Connector.Restart(t)
	c.Connector.Field(t, "connector started", "subject")
	t.Run("connector secret fetch", func(t *testing.T) {
		r := c.Call(c.APIKey, map[string]any{"operation": "getBalance"})
		unavailable(t, r.Status, r.Header, r.Body, r.Raw)
	})
	c.Postgres.Start()
	testenv.Poll(t, "the fresh key works once Postgres is back", 15*time.Second, func() error {
		time.Sleep(300 * time.Millisecond) // within the key's rate limit
		if r := c.Call(fresh, map[string]any{"operation": "getBalance"}); r.Status != 200 {
			return errorf("%d %s", r.Status, r.Raw)
		}
		return nil
	})
}

// TestNATSOutageAndPlacements (case 13): with NATS down a placement is
// refused at once; a placement in flight when NATS dies answers soon
// after NATS is back (not at its deadline), saying that a repeat with the
// same clientOrderId returns the order, and the repeat does.
func TestNATSOutageAndPlacements(t *testing.T) {
	// The deadline is far enough from NATS's return (over 4 s) that an
	// answer at reconnect is told apart from one at the deadline.
	const deadline = 6 * time.Second
	c := newCluster(t, clusterOptions{RequestTimeout: deadline})
	t.Run("down", func(t *testing.T) {
		c.stopNATS(t)
		defer c.NATS.Start()
		r := c.Call(c.APIKey, restingBuy("nats-down-1", "0.01"))
		if r.Status != http.StatusServiceUnavailable || !contains(fmt.Sprint(r.Body["error"]), "NATS") {
			t.Fatalf("got %d %s, want 503 naming NATS", r.Status, r.Raw)
		}
		if r.Took > time.Second {
			t.Errorf("refused after %s, want at once", r.Took)
		}
	})
	// Every service reconnects on its own schedule: until the keys service
	// is back, say, the edge (whose key cache starts over) answers 503.
	whole := func(t *testing.T) {
		t.Helper()
		testenv.Poll(t, "the cluster answers after NATS is back", 15*time.Second, func() error {
			time.Sleep(200 * time.Millisecond) // within the key's rate limit
			if r := c.Call(c.APIKey, map[string]any{"operation": "getBalance"}); r.Status != 200 {
				return errorf("%d %s", r.Status, r.Raw)
			}
			return nil
		})
	}
	whole(t)
	// inFlight places id while the venue hangs, takes NATS down under it
	// for downFor, and returns the answer and how long after NATS was back
	// it came (negative: while NATS was still down).
	inFlight := func(t *testing.T, id string, downFor time.Duration) (reply, time.Duration) {
		c.Venue.Pause() // the placement waits at the venue
		answered := make(chan reply, 1)
		go func() { answered <- c.Call(c.APIKey, restingBuy(id, "0.01")) }()
		time.Sleep(500 * time.Millisecond)
		c.NATS.Stop()
		c.Venue.Resume()
		var r reply
		select {
		case r = <-answered:
		case <-time.After(downFor):
		}
		c.NATS.Start()
		back := time.Now()
		if r.Status != 0 {
			return r, -1
		}
		select {
		case r = <-answered:
		case <-time.After(15 * time.Second):
			t.Fatal("no answer 15 s after NATS was back")
		}
		return r, time.Since(back)
	}
	// settled checks that the answer was the order or said how to get it,
	// and that exactly one order stands.
	settled := func(t *testing.T, id string, r reply) {
		t.Helper()
		if r.Status != 200 {
			msg := fmt.Sprint(r.Body["error"])
			if r.code() != string(contract.CodeServiceUnavailable) || !contains(msg, "same clientOrderId "+id) || !contains(msg, "NATS") {
				t.Fatalf("got %d %s, want 503 saying a repeat with clientOrderId %s returns the order", r.Status, r.Raw, id)
			}
			testenv.Poll(t, "the repeat", 10*time.Second, func() error {
				time.Sleep(200 * time.Millisecond)
				if again := c.Call(c.APIKey, restingBuy(id, "0.01")); again.Status != 200 {
					return errorf("%d %s", again.Status, again.Raw)
				}
				return nil
			})
		}
		whole(t)
		if n := len(c.openOrders(id)); n != 1 {
			t.Fatalf("%d open orders with clientOrderId %s, want 1", n, id)
		}
	}
	t.Run("back before the deadline", func(t *testing.T) {
		r, after := inFlight(t, "nats-mid-1", time.Second)
		t.Logf("answer %d %s, %s after NATS was back", r.Status, r.Raw, after)
		// The connector's buffered reply is delivered only if the edge
		// re-subscribed its reply inbox first; nothing orders the two
		// reconnects, and when the connector wins the reply is dropped and
		// the edge answers 503 half a second after its own reconnect. That
		// is up to 250 ms reconnect wait + 100 ms jitter + 50 ms link poll +
		// 500 ms grace = 0.9 s on an idle machine; 2 s leaves a loaded one
		// room and is still well before the deadline.
		if after < 0 || after > 2*time.Second {
			t.Errorf("answered %s after NATS was back, want within 2 s, well before the %s deadline", after, deadline)
		}
		settled(t, "nats-mid-1", r)
	})
	t.Run("down past the deadline", func(t *testing.T) {
		start := time.Now()
		r, after := inFlight(t, "nats-mid-2", deadline+2*time.Second)
		t.Logf("answer %d %s after %s", r.Status, r.Raw, time.Since(start))
		if after >= 0 {
			t.Fatalf("no answer before NATS was back (%s later), want one at the %s deadline", after, deadline)
		}
		settled(t, "nats-mid-2", r)
	})
}

// TestLongBook (case 15): an answer larger than the NATS server's
// max_payload is refused with 400 INVALID_REQUEST saying how to ask for
// less, at once, never as an outage; every service logs the server's
// limit at connect, warning when it is below 8 MiB.
func TestLongBook(t *testing.T) {
	c := newCluster(t, clusterOptions{NATSConf: "max_payload: 32KB"})
	for _, p := range []*testenv.Process{c.Edge, c.Connector, c.Keys} {
		warned := false
		for _, rec := range p.Records() {
			if rec["level"] == "WARN" && contains(fmt.Sprint(rec["msg"]), "max_payload") && rec["max_payload"] == float64(32<<10) {
				warned = true
			}
		}
		if !warned {
			t.Errorf("%s did not warn of the 32 KiB max_payload at connect", p.Name)
		}
	}
	for b := range 20 { // 200 resting orders (about 40 KiB listed), half on each market
		market, price := "BTC", "30000"
		if b%2 == 1 {
			market, price = "ETH", "1000"
		}
		orders := []map[string]any{}
		for i := range 10 {
			orders = append(orders, map[string]any{"market": market, "side": "BUY", "size": "0.01", "price": price,
				"clientOrderId": fmt.Sprintf("book-%d-%d", b, i)})
		}
		if r := c.Call(c.APIKey, map[string]any{"operation": "placeBatchOrder", "orders": orders}); r.Status != 200 {
			t.Fatalf("batch %d: %d %s", b, r.Status, r.Raw)
		}
	}
	r := c.Call(c.APIKey, map[string]any{"operation": "getOrders"})
	msg := fmt.Sprint(r.Body["error"])
	if r.Status != http.StatusBadRequest || r.code() != string(contract.CodeInvalidRequest) || !contains(msg, "max_payload") || !contains(msg, "name a market") {
		t.Fatalf("getOrders of 200 orders: %d %s, want 400 INVALID_REQUEST saying how to ask for less", r.Status, r.Raw)
	}
	if r.Took > 2*time.Second {
		t.Errorf("refused after %s, want at once", r.Took)
	}
	one := c.Call(c.APIKey, map[string]any{"operation": "getOrders", "market": "ETH"})
	if orders, _ := one.Body["orders"].([]any); one.Status != 200 || len(orders) != 100 {
		t.Fatalf("getOrders of one market: %d %.300s", one.Status, one.Raw)
	}
}
