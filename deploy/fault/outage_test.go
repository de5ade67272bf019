package fault

import (
	"context"
	"io"
	"net/http"
	"strconv"
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
