package fault

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/admin"
	"github.com/shopspring/decimal"
)

// TestRevocationAfterNATSOutage (case 1): a key revoked while NATS is down
// is refused within a second of NATS being back, though the edge had it
// cached and may have missed the event.
func TestRevocationAfterNATSOutage(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	for range 3 { // the edge caches the key
		if r := c.Call(c.APIKey, map[string]any{"operation": "getBalance"}); r.Status != 200 {
			t.Fatalf("before: %d %s", r.Status, r.Raw)
		}
	}
	c.NATS.Stop()
	if _, err := c.Admin.RevokeKey(context.Background(), c.KeyID); err != nil {
		t.Fatalf("revoke while NATS is down: %v", err)
	}
	c.NATS.Start()
	back := time.Now()
	testenv.Poll(t, "revoked key refused after NATS is back", 5*time.Second, func() error {
		if r := c.Call(c.APIKey, map[string]any{"operation": "getBalance"}); r.code() != string(contract.CodeKeyRevoked) {
			return errorf("%d %s", r.Status, r.Raw)
		}
		return nil
	})
	if took := time.Since(back); took > time.Second {
		t.Errorf("revocation reached the edge %s after NATS was back, want within 1 s", took)
	}
}

// TestDependencyOutages (case 6): Redis, the keys service and NATS down
// are 503 SERVICE_UNAVAILABLE with Retry-After, named, and fast.
func TestDependencyOutages(t *testing.T) {
	c := newCluster(t, clusterOptions{RequestTimeout: 5 * time.Second})
	unavailable := func(t *testing.T, key, what string) {
		t.Helper()
		r := c.Call(key, map[string]any{"operation": "getBalance"})
		if r.Status != http.StatusServiceUnavailable || r.code() != string(contract.CodeServiceUnavailable) {
			t.Fatalf("got %d %s, want 503 SERVICE_UNAVAILABLE", r.Status, r.Raw)
		}
		if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
		}
		if msg, _ := r.Body["error"].(string); !contains(msg, what) {
			t.Errorf("message %q does not name %q", msg, what)
		}
		if r.Took > 2*time.Second {
			t.Errorf("answered after %s, want well under 2 s", r.Took)
		}
	}
	t.Run("redis", func(t *testing.T) {
		c.Redis.Kill()
		defer c.Redis.Start()
		unavailable(t, c.APIKey, "Redis")
	})
	t.Run("keys service", func(t *testing.T) {
		fresh, _ := c.newKey() // not cached by the edge
		c.Keys.Pause()
		defer c.Keys.Resume()
		unavailable(t, fresh, "keys service")
	})
	t.Run("nats", func(t *testing.T) {
		c.stopNATS(t)
		defer c.NATS.Start()
		unavailable(t, c.APIKey, "NATS")
	})
	t.Run("public readyz says no more than not ready", func(t *testing.T) {
		c.Redis.Kill()
		defer c.Redis.Start()
		resp, err := http.Get(c.EdgeURL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b [512]byte
		n, _ := resp.Body.Read(b[:])
		if body := string(b[:n]); resp.StatusCode != 503 || contains(body, "redis") || contains(body, "127.0.0.1") {
			t.Fatalf("public /readyz: %d %s", resp.StatusCode, body)
		}
	})
}

// TestConnectorKilledMidPlacement (case 2): the connector dies while a
// placement is in flight; after the request's deadline a retry with the
// same clientOrderId answers at once with the one order, never a second.
func TestConnectorKilledMidPlacement(t *testing.T) {
	c := newCluster(t, clusterOptions{RequestTimeout: 2 * time.Second})
	c.Venue.Pause() // the placement hangs at the venue
	var first reply
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); first = c.Call(c.APIKey, restingBuy("killed-1", "0.01")) }()
	time.Sleep(500 * time.Millisecond) // the connector holds the claim and waits on the venue
	c.Connector.Kill()
	c.Venue.Resume()
	c.Connector = c.Connector.Restart(t)
	wg.Wait()
	if first.Status == 200 {
		t.Fatalf("the placement answered though its connector was killed: %s", first.Raw)
	}
	var retry reply
	testenv.Poll(t, "retry after the deadline", 10*time.Second, func() error {
		retry = c.Call(c.APIKey, restingBuy("killed-1", "0.01"))
		if retry.Status != 200 {
			return errorf("%d %s", retry.Status, retry.Raw)
		}
		return nil
	})
	if retry.Took > 2*time.Second {
		t.Errorf("the retry took %s", retry.Took)
	}
	if n := len(c.openOrders("killed-1")); n != 1 {
		t.Fatalf("%d open orders with clientOrderId killed-1, want exactly 1", n)
	}
}

// TestIdempotencyAcrossRedisRestart (case 3): with Redis persisting
// every write (as compose runs it), a retry after a Redis crash returns
// the first order and places nothing.
func TestIdempotencyAcrossRedisRestart(t *testing.T) {
	c := newCluster(t, clusterOptions{PersistRedis: true})
	first := c.Call(c.APIKey, restingBuy("redis-1", "0.01"))
	if first.Status != 200 {
		t.Fatalf("place: %d %s", first.Status, first.Raw)
	}
	c.Redis.Kill()
	c.Redis.Start()
	var again reply
	testenv.Poll(t, "retry after the Redis restart", 10*time.Second, func() error {
		again = c.Call(c.APIKey, restingBuy("redis-1", "0.01"))
		if again.Status != 200 {
			return errorf("%d %s", again.Status, again.Raw)
		}
		return nil
	})
	if again.Body["orderId"] != first.Body["orderId"] {
		t.Fatalf("retry answered order %v, first was %v", again.Body["orderId"], first.Body["orderId"])
	}
	if n := len(c.openOrders("redis-1")); n != 1 {
		t.Fatalf("%d open orders with clientOrderId redis-1, want 1", n)
	}
}

// TestSameClientOrderIDOtherOrder (case 4): 409 IDEMPOTENCY_CONFLICT
// naming the field, nothing placed.
func TestSameClientOrderIDOtherOrder(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	if r := c.Call(c.APIKey, restingBuy("conflict-1", "0.01")); r.Status != 200 {
		t.Fatalf("place: %d %s", r.Status, r.Raw)
	}
	r := c.Call(c.APIKey, restingBuy("conflict-1", "0.02"))
	if r.Status != http.StatusConflict || r.code() != string(contract.CodeIdempotencyConflict) {
		t.Fatalf("got %d %s, want 409 IDEMPOTENCY_CONFLICT", r.Status, r.Raw)
	}
	if msg, _ := r.Body["error"].(string); !contains(msg, "size 0.02 (first 0.01)") {
		t.Errorf("message %q does not name the size", msg)
	}
	if n := len(c.openOrders("conflict-1")); n != 1 {
		t.Fatalf("%d open orders, want 1", n)
	}
}

// TestPaperVenueKilled (case 7): the paper venue killed with -9 comes back
// with the same balance, open orders and position, and its order ids go on
// from where they were.
func TestPaperVenueKilled(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	ctx := context.Background()
	cred, err := c.Admin.CreateCredential(ctx, c.Account, admin.CredentialRequest{
		Exchange: contract.Paper, Env: contract.Testnet, Label: "rich", Secret: json.RawMessage(`{"startingBalance":"25000"}`)})
	if err != nil {
		t.Fatal(err)
	}
	call := func(body map[string]any) reply {
		body["credentialId"] = cred.ID
		return c.Call(c.APIKey, body)
	}
	if r := call(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"}); r.Status != 200 {
		t.Fatalf("market order: %d %s", r.Status, r.Raw)
	}
	resting := call(restingBuy("venue-1", "0.01"))
	if resting.Status != 200 {
		t.Fatalf("limit order: %d %s", resting.Status, resting.Raw)
	}
	snapshot := func() (string, string, any) {
		orders := call(map[string]any{"operation": "getOrders"})
		pos := call(map[string]any{"operation": "getPositions"})
		bal := call(map[string]any{"operation": "getBalance"})
		p, _ := pos.Body["positions"].([]any)
		var size any
		if len(p) == 1 {
			size = p[0].(map[string]any)["size"]
		}
		return orders.Raw, fmt.Sprint(bal.Body["equity"] != nil), size
	}
	ordersBefore, _, sizeBefore := snapshot()
	c.Venue.Kill()
	c.Venue = c.Venue.Restart(t)
	c.Venue.Field(t, "paper venue started", "addr")
	var ordersAfter string
	var sizeAfter any
	testenv.Poll(t, "the venue answers again", 10*time.Second, func() error {
		if r := call(map[string]any{"operation": "getBalance"}); r.Status != 200 {
			return errorf("%d %s", r.Status, r.Raw)
		}
		return nil
	})
	ordersAfter, _, sizeAfter = snapshot()
	if ordersAfter != ordersBefore {
		t.Errorf("open orders changed across the restart:\nbefore %s\nafter  %s", ordersBefore, ordersAfter)
	}
	if sizeBefore == nil || sizeAfter != sizeBefore {
		t.Errorf("position size before %v, after %v", sizeBefore, sizeAfter)
	}
	bal := call(map[string]any{"operation": "getBalance"})
	eq, err := decimal.NewFromString(fmt.Sprint(bal.Body["equity"]))
	if err != nil || eq.LessThan(decimal.NewFromInt(24000)) || eq.GreaterThan(decimal.NewFromInt(26000)) {
		t.Errorf("equity %v after the restart: want about the 25000 the credential started with", bal.Body["equity"])
	}
	next := call(restingBuy("venue-2", "0.01"))
	if id, _ := next.Body["orderId"].(string); id <= resting.Body["orderId"].(string) {
		t.Errorf("order id %v after the restart does not follow %v", next.Body["orderId"], resting.Body["orderId"])
	}
}

// TestPlacementTimeoutReconciled (case 5): the venue hangs; the connector
// answers before the edge's deadline that the order's state is unknown
// (never REJECTED), and a retry once the venue is back answers the one
// order it holds.
func TestPlacementTimeoutReconciled(t *testing.T) {
	c := newCluster(t, clusterOptions{RequestTimeout: 2 * time.Second})
	c.Venue.Pause()
	r := c.Call(c.APIKey, restingBuy("slow-1", "0.01"))
	c.Venue.Resume()
	msg, _ := r.Body["error"].(string)
	if r.Status != http.StatusGatewayTimeout || !contains(msg, "not found at the exchange yet") || !contains(msg, "slow-1") {
		t.Fatalf("got %d %s, want 504 saying the state of slow-1 is unknown", r.Status, r.Raw)
	}
	if r.Took >= 2*time.Second {
		t.Errorf("answered after %s: the connector should answer before the edge's 2 s deadline", r.Took)
	}
	var retry reply
	testenv.Poll(t, "retry once the venue is back", 10*time.Second, func() error {
		retry = c.Call(c.APIKey, restingBuy("slow-1", "0.01"))
		if retry.Status != 200 {
			return errorf("%d %s", retry.Status, retry.Raw)
		}
		return nil
	})
	if n := len(c.openOrders("slow-1")); n != 1 {
		t.Fatalf("%d open orders with clientOrderId slow-1, want 1", n)
	}
}

// TestTraceability (case 10): the keys service warns loudly without a NATS
// user; an outage's log line carries the request id the client saw; the
// public /readyz names nothing, the health port names the dependency.
func TestTraceability(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	warned := false
	for _, rec := range c.Keys.Records() {
		if rec["level"] == "WARN" && contains(fmt.Sprint(rec["msg"]), "NATS WITHOUT A USER") {
			warned = true
		}
	}
	if !warned {
		t.Error("keys did not warn that NATS has no user")
	}
	c.Redis.Kill()
	defer c.Redis.Start()
	r := c.Call(c.APIKey, map[string]any{"operation": "getBalance"})
	id := r.Header.Get("X-Request-Id")
	testenv.Poll(t, "the outage logged with the request id", 5*time.Second, func() error {
		for _, rec := range c.Edge.Records() {
			if rec["msg"] == "dependency unavailable" && rec["request_id"] == id {
				return nil
			}
		}
		return errorf("no \"dependency unavailable\" line with request_id %s", id)
	})
	health := c.Edge.Field(t, "health endpoints listening", "addr")
	resp, err := http.Get("http://" + health + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b [512]byte
	n, _ := resp.Body.Read(b[:])
	if resp.StatusCode != 503 || !contains(string(b[:n]), "redis") {
		t.Fatalf("health port /readyz: %d %s, want 503 naming redis", resp.StatusCode, b[:n])
	}
}

// TestProtectionPairWatchedAcrossReplicas (case 9): Binance does not link
// a protection pair; with two connector-binance replicas sharing Redis,
// closing the position by hand cancels both legs, each once.
func TestProtectionPairWatchedAcrossReplicas(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	cred := c.binanceVenue(2)
	call := func(body map[string]any) reply {
		body["credentialId"] = cred
		r := c.Call(c.APIKey, body)
		if r.Status != 200 {
			t.Fatalf("%v: %d %s", body["operation"], r.Status, r.Raw)
		}
		return r
	}
	call(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"})
	mark := call(map[string]any{"operation": "getMarkPrice", "market": "BTC"}).Body["markPrice"]
	prot := call(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.01",
		"entryPrice": mark, "tpPercent": 5, "slPercent": 30}).Body
	call(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
	deadline := time.Now().Add(15 * time.Second)
	for { // every 300 ms, within the key's rate limit
		var left []any
		for _, o := range call(map[string]any{"operation": "getOrders", "market": "BTC"}).Body["orders"].([]any) {
			if id := o.(map[string]any)["id"]; id == prot["tpOrderId"] || id == prot["slOrderId"] {
				left = append(left, id)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("protection legs %v still open 15 s after the position was closed", left)
		}
		time.Sleep(300 * time.Millisecond)
	}
	cancelled := map[any]int{}
	for _, p := range c.Binance {
		for _, rec := range p.Records() {
			if rec["msg"] == "protection leg cancelled" {
				cancelled[rec["order_id"]]++
			}
		}
	}
	if len(cancelled) != 2 || cancelled[prot["tpOrderId"]] != 1 || cancelled[prot["slOrderId"]] != 1 {
		t.Fatalf("legs cancelled by the replicas: %v, want each of %v and %v once", cancelled, prot["tpOrderId"], prot["slOrderId"])
	}
}

// TestHyperliquidProtectionIDs (case 8): the venue acknowledges position
// TP/SL legs with "waitingForTrigger" and no oid; the connector answers
// their ids (found by cloid), which getOrders lists, and the venue cancels
// both with the position.
func TestHyperliquidProtectionIDs(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	cred := c.hyperliquidVenue()
	call := func(body map[string]any) reply {
		body["credentialId"] = cred
		r := c.Call(c.APIKey, body)
		if r.Status != 200 {
			t.Fatalf("%v: %d %s", body["operation"], r.Status, r.Raw)
		}
		return r
	}
	call(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"})
	mark := call(map[string]any{"operation": "getMarkPrice", "market": "BTC"}).Body["markPrice"]
	prot := call(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.01",
		"entryPrice": mark, "tpPercent": 5, "slPercent": 30}).Body
	pending := map[any]bool{}
	for _, o := range call(map[string]any{"operation": "getOrders", "market": "BTC"}).Body["orders"].([]any) {
		pending[o.(map[string]any)["id"]] = o.(map[string]any)["status"] == "PENDING"
	}
	for _, leg := range []string{"tpOrderId", "slOrderId"} {
		if id, _ := prot[leg].(string); id == "" || !pending[id] {
			t.Errorf("%s = %q, want the id of a pending order (orders %v)", leg, id, pending)
		}
	}
	call(map[string]any{"operation": "closeAllPositions", "market": "BTC"})
	if orders := call(map[string]any{"operation": "getOrders", "market": "BTC"}).Body["orders"].([]any); len(orders) != 0 {
		t.Fatalf("orders left after the position closed: %v", orders)
	}
}
