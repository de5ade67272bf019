package standalone

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/admin"
	"github.com/shopspring/decimal"
)

// TestProcesses runs perpgate as it is deployed (DESIGN §1): keys, edge,
// the paper venue and connector-paper as separate OS processes against the
// machine's NATS, Redis and Postgres. It drives an order round trip through
// the edge, checks that a missing connector is answered 503
// EXCHANGE_UNAVAILABLE at once, and shows with two connector replicas that
// they share one queue group and hold no venue state (DESIGN §8): each
// request is served by exactly one replica, both serve, and an order placed
// through one is cancelled through the other. Replicas join and leave under
// traffic without a request lost to a timeout.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four binaries and runs them as processes; skipped with -short")
	}
	natsURL := testenv.NATSURL(t)
	rdb, prefix := testenv.RedisPrefix(t)
	_, dsn := testenv.Postgres(t)
	bins := testenv.Build(t, "./services/keys/cmd/keys", "./services/edge/cmd/edge",
		"./services/connectors/paper/cmd/paper-venue", "./services/connectors/paper/cmd/connector-paper")

	// The prefix scopes NATS subjects and, through the edge (prefix+":rl")
	// and the connectors (prefix+":idem:"), Redis keys that RedisPrefix
	// deletes when the test ends.
	c := newCluster(t, bins, map[string]string{
		"PERPGATE_NATS_URL":       natsURL,
		"PERPGATE_SUBJECT_PREFIX": prefix,
		"PERPGATE_LOG_FORMAT":     "json",
		"PERPGATE_HEALTH_ADDR":    "127.0.0.1:0",
	})
	adminToken := randomHex(t, 24)
	keysProc := c.start("keys", "keys", map[string]string{
		"PERPGATE_DATABASE_URL": dsn,
		"PERPGATE_DATA_DIR":     t.TempDir(),
		"PERPGATE_ADMIN_ADDR":   "127.0.0.1:0",
		"PERPGATE_ADMIN_TOKEN":  adminToken,
		"PERPGATE_MASTER_KEY":   randomKey(t),
	})
	venueProc := c.start("paper-venue", "paper-venue", map[string]string{
		"PERPGATE_PAPER_VENUE_ADDR": "127.0.0.1:0",
		"PERPGATE_PAPER_SEED":       "7",
	})
	redisURL := redisURLOf(rdb.Options().Addr, rdb.Options().DB, rdb.Options().Username, rdb.Options().Password)
	edgeProc := c.start("edge", "edge", map[string]string{
		"PERPGATE_LISTEN_ADDR":     "127.0.0.1:0",
		"PERPGATE_REDIS_URL":       redisURL,
		"PERPGATE_REQUEST_TIMEOUT": "5s",
		// Hundreds of calls in seconds: keep the builder budget
		// (SPEC §8, 120/min) out of this test.
		"PERPGATE_TIER_LIMITS_BUILDER": "10000/100000",
	})
	connectorEnv := map[string]string{
		"PERPGATE_REDIS_URL":       redisURL,
		"PERPGATE_PAPER_VENUE_URL": "http://" + c.addr(t, venueProc, "paper venue started", "addr"),
		"PERPGATE_LOG_LEVEL":       "debug",
	}
	connector := c.start("connector-paper", "connector-paper", connectorEnv)

	ctx := context.Background()
	adm := admin.NewClient("http://"+c.addr(t, keysProc, "keys service started", "admin_addr"), adminToken)
	var acct admin.AccountResponse
	c.poll(t, "admin API answers", 10*time.Second, func() error {
		var err error
		acct, err = adm.CreateAccount(ctx, contract.TierBuilder, "process-test")
		if ce, ok := contract.AsError(err); ok {
			t.Fatalf("create account: %v", ce)
		}
		return err
	})
	cred, err := adm.CreateCredential(ctx, acct.ID, admin.CredentialRequest{
		Exchange: contract.Paper, Env: contract.Testnet, Label: "process-test",
		Secret: json.RawMessage(`{"startingBalance":"5000"}`),
	})
	if err != nil {
		t.Fatalf("create credential: %v", err)
	}
	key, err := adm.CreateKey(ctx, acct.ID, admin.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	c.apiKey, c.credentialID = key.Key, cred.ID

	c.edgeURL = "http://" + c.addr(t, edgeProc, "edge listening", "addr")
	c.poll(t, "edge /healthz answers 200", 10*time.Second, func() error {
		resp, err := c.http.Get(c.edgeURL + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
	c.waitServing(t)

	t.Run("order round trip", func(t *testing.T) {
		mark := dec(t, c.ok(t, map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"])
		if bal := c.ok(t, map[string]any{"operation": "getBalance"}); bal["equity"] != "5000" {
			t.Errorf("getBalance: want equity 5000 (the credential's startingBalance), got %v", bal)
		}
		placed := c.ok(t, c.farLimitOrder(mark))
		if placed["status"] != "OPEN" {
			t.Fatalf("placeLimitOrder far below the market: want status OPEN, got %v", placed)
		}
		orders := objects(t, c.ok(t, map[string]any{"operation": "getOrders", "market": "BTC"})["orders"])
		if len(orders) != 1 || orders[0]["id"] != placed["orderId"] {
			t.Fatalf("getOrders: want only order %v, got %v", placed["orderId"], orders)
		}
		c.ok(t, map[string]any{"operation": "cancelOrder", "orderId": placed["orderId"], "market": "BTC"})
		if left := objects(t, c.ok(t, map[string]any{"operation": "getOrders"})["orders"]); len(left) != 0 {
			t.Fatalf("getOrders after cancelOrder: want none, got %v", left)
		}
	})

	connector.Stop()
	t.Run("no connector", func(t *testing.T) {
		tests := []struct {
			name string
			body map[string]any
		}{
			{name: "read", body: map[string]any{"operation": "getMarkPrice", "market": "BTC"}},
			{name: "placement", body: map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "1000"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r, err := c.v1(tt.body)
				if err != nil {
					t.Fatal(err)
				}
				if r.status != http.StatusServiceUnavailable || r.body["code"] != string(contract.CodeExchangeUnavailable) {
					t.Errorf("want 503 %s, got %d %s", contract.CodeExchangeUnavailable, r.status, r.raw)
				}
				if msg, _ := r.body["error"].(string); !strings.Contains(msg, "paper") {
					t.Errorf("message should name the exchange: %q", msg)
				}
				// No responders is known at once; waiting out the 5 s
				// deadline would mean the edge mistook it for a timeout.
				if r.elapsed > 2*time.Second {
					t.Errorf("answered after %s; want well within the 5s request deadline", r.elapsed)
				}
			})
		}
	})

	// The replicas join under traffic, as when ops scale a connector up.
	load := c.startLoad()
	replicas := []*testenv.Process{
		c.start("connector-paper-a", "connector-paper", connectorEnv),
		c.start("connector-paper-b", "connector-paper", connectorEnv),
	}
	for _, p := range replicas {
		c.waitLog(t, p, "connector started")
	}
	c.poll(t, "requests succeed while the replicas start", 15*time.Second, func() error {
		if n := load.successes.Load(); n < 20 {
			return fmt.Errorf("%d successes", n)
		}
		return nil
	})
	t.Run("replicas join under traffic", func(t *testing.T) {
		// Before a replica is up a request is refused at once; once an
		// endpoint is on the bus, a request that reaches it is served.
		checkLoad(t, load.stop())
	})

	t.Run("two replicas share one queue group", func(t *testing.T) {
		var ids []string
		for i := range 40 {
			body := map[string]any{"operation": "getMarkPrice", "market": "ETH"}
			if i%2 == 1 {
				body = map[string]any{"operation": "getOrders"}
			}
			ids = append(ids, c.okReply(t, body).requestID)
		}
		mark := dec(t, c.ok(t, map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"])

		// Place and cancel until one order has crossed replicas: the
		// queue group picks a member at random, so a few rounds suffice.
		type round struct{ place, cancel string }
		var rounds []round
		var served map[string][]string
		crossed := 0
		for len(rounds) < 5 || (crossed == 0 && len(rounds) < 30) {
			placed := c.okReply(t, c.farLimitOrder(mark))
			cancelled := c.okReply(t, map[string]any{"operation": "cancelOrder", "orderId": placed.body["orderId"], "market": "BTC"})
			rounds = append(rounds, round{place: placed.requestID, cancel: cancelled.requestID})
			ids = append(ids, placed.requestID, cancelled.requestID)
			if len(rounds) < 5 {
				continue
			}
			// A replica logs "request done" after it has replied.
			c.poll(t, "replicas log every request", 5*time.Second, func() error {
				served = servedBy(replicas)
				for _, id := range ids {
					if len(served[id]) == 0 {
						return fmt.Errorf("request %s is in no replica's log", id)
					}
				}
				return nil
			})
			crossed = 0
			for _, r := range rounds {
				if served[r.place][0] != served[r.cancel][0] {
					crossed++
				}
			}
		}

		perReplica := map[string]int{}
		for _, id := range ids {
			if len(served[id]) != 1 {
				t.Errorf("request %s was served by %v; a queue group delivers it to exactly one replica", id, served[id])
				continue
			}
			perReplica[served[id][0]]++
		}
		for _, p := range replicas {
			if perReplica[p.Name] == 0 {
				t.Errorf("%s served none of %d requests: %v", p.Name, len(ids), perReplica)
			}
		}
		if crossed == 0 {
			t.Errorf("in %d place/cancel rounds no order was cancelled by another replica than the one that placed it", len(rounds))
		}
		t.Logf("%d requests served: %v; %d of %d orders cancelled by the other replica", len(ids), perReplica, crossed, len(rounds))
		if left := objects(t, c.ok(t, map[string]any{"operation": "getOrders"})["orders"]); len(left) != 0 {
			t.Errorf("getOrders after the rounds: want none, got %v", left)
		}
	})

	// A replica stopped under traffic finishes what it took and refuses
	// what it had not; the other replica serves the rest.
	load = c.startLoad()
	c.poll(t, "requests succeed before a replica stops", 10*time.Second, func() error {
		if n := load.successes.Load(); n < 10 {
			return fmt.Errorf("%d successes", n)
		}
		return nil
	})
	replicas[0].Stop()
	before := load.successes.Load()
	c.poll(t, "requests succeed after a replica stopped", 10*time.Second, func() error {
		if n := load.successes.Load() - before; n < 20 {
			return fmt.Errorf("%d successes", n)
		}
		return nil
	})
	t.Run("a replica leaves under traffic", func(t *testing.T) {
		checkLoad(t, load.stop())
	})
}

// checkLoad fails t unless every reply is a success or an immediate 503
// EXCHANGE_UNAVAILABLE: nothing is lost to a timeout or an internal error.
func checkLoad(t *testing.T, replies []loadReply) {
	t.Helper()
	for _, r := range replies {
		if r.err != nil {
			t.Error(r.err)
		} else if r.status != http.StatusOK && (r.status != http.StatusServiceUnavailable || r.body["code"] != string(contract.CodeExchangeUnavailable)) {
			t.Errorf("want 200 or 503 %s; got %d %s", contract.CodeExchangeUnavailable, r.status, r.raw)
		}
	}
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func randomKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// redisURLOf gives the test Redis to the processes as PERPGATE_REDIS_URL.
func redisURLOf(addr string, db int, user, password string) string {
	u := url.URL{Scheme: "redis", Host: addr, Path: "/" + strconv.Itoa(db)}
	if password != "" {
		u.User = url.UserPassword(user, password)
	}
	return u.String()
}

// servedBy maps each request id in the replicas' "request done" log lines
// to the names of the replicas that logged it.
func servedBy(replicas []*testenv.Process) map[string][]string {
	served := map[string][]string{}
	for _, p := range replicas {
		for _, rec := range p.Records() {
			if id, _ := rec["request_id"].(string); rec["msg"] == "request done" && id != "" {
				served[id] = append(served[id], p.Name)
			}
		}
	}
	return served
}

// cluster is the set of processes of one test and a client of its edge.
type cluster struct {
	t                             *testing.T
	bins                          string
	env                           map[string]string // settings every process gets
	procs                         []*testenv.Process
	http                          *http.Client
	edgeURL, apiKey, credentialID string
}

// newCluster returns an empty cluster.
func newCluster(t *testing.T, bins string, env map[string]string) *cluster {
	return &cluster{t: t, bins: bins, env: env, http: &http.Client{Timeout: 15 * time.Second}}
}

// start runs binary bin with the cluster's settings plus env, and nothing
// else from the test's environment. The process is stopped when the test
// ends.
func (c *cluster) start(name, bin string, env map[string]string) *testenv.Process {
	c.t.Helper()
	vars := map[string]string{}
	for k, v := range c.env {
		vars[k] = v
	}
	for k, v := range env {
		vars[k] = v
	}
	p := testenv.Start(c.t, name, filepath.Join(c.bins, bin), vars)
	c.procs = append(c.procs, p)
	return p
}

// check fails the test when a process has exited that the test did not stop.
func (c *cluster) check(t testing.TB) {
	t.Helper()
	for _, p := range c.procs {
		p.Check(t)
	}
}

// poll calls f until it returns nil, failing the test after timeout or as
// soon as a process dies.
func (c *cluster) poll(t testing.TB, what string, timeout time.Duration, f func() error) {
	t.Helper()
	testenv.Poll(t, what, timeout, func() error {
		c.check(t)
		return f()
	})
}

// waitLog waits for the first log line of p with message msg.
func (c *cluster) waitLog(t testing.TB, p *testenv.Process, msg string) map[string]any {
	t.Helper()
	var found map[string]any
	c.poll(t, fmt.Sprintf("%s logs %q", p.Name, msg), 15*time.Second, func() error {
		for _, rec := range p.Records() {
			if rec["msg"] == msg {
				found = rec
				return nil
			}
		}
		return errors.New("no such line yet")
	})
	return found
}

// addr returns the listen address p logs in field of its msg line: the
// processes listen on port 0, so this is how the test learns the port.
func (c *cluster) addr(t testing.TB, p *testenv.Process, msg, field string) string {
	t.Helper()
	a, _ := c.waitLog(t, p, msg)[field].(string)
	if a == "" {
		t.Fatalf("%s: %q line has no %s", p.Name, msg, field)
	}
	return a
}

// waitServing polls /v1 until a connector answers through the edge.
func (c *cluster) waitServing(t testing.TB) {
	t.Helper()
	c.poll(t, "a connector answers /v1", 15*time.Second, func() error {
		r, err := c.v1(map[string]any{"operation": "getMarkPrice", "market": "BTC"})
		if err != nil {
			return err
		}
		if r.status != http.StatusOK {
			return fmt.Errorf("status %d %s", r.status, r.raw)
		}
		return nil
	})
}

// v1Reply is one /v1 answer.
type v1Reply struct {
	status    int
	requestID string // X-Request-Id
	raw       []byte
	body      map[string]any
	elapsed   time.Duration
}

// v1 posts body to the edge with the test key and credential.
func (c *cluster) v1(body map[string]any) (v1Reply, error) {
	body["credentialId"] = c.credentialID
	b, err := json.Marshal(body)
	if err != nil {
		return v1Reply{}, err
	}
	req, err := http.NewRequest(http.MethodPost, c.edgeURL+"/v1", bytes.NewReader(b))
	if err != nil {
		return v1Reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", c.apiKey)
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return v1Reply{}, fmt.Errorf("POST /v1 %v: %w", body["operation"], err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	r := v1Reply{status: resp.StatusCode, requestID: resp.Header.Get("X-Request-Id"), raw: raw, elapsed: time.Since(start)}
	if err != nil {
		return r, fmt.Errorf("POST /v1 %v: read body: %w", body["operation"], err)
	}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		return r, fmt.Errorf("POST /v1 %v: body is not a JSON object: %q", body["operation"], raw)
	}
	return r, nil
}

// okReply posts body and fails t unless the answer is a success with a
// request id.
func (c *cluster) okReply(t *testing.T, body map[string]any) v1Reply {
	t.Helper()
	r, err := c.v1(body)
	if err != nil {
		c.check(t)
		t.Fatal(err)
	}
	if r.status != http.StatusOK || r.body["success"] != true || r.requestID == "" {
		c.check(t)
		t.Fatalf("%v: status %d, X-Request-Id %q, body %s", body["operation"], r.status, r.requestID, r.raw)
	}
	return r
}

// ok is okReply's body.
func (c *cluster) ok(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	return c.okReply(t, body).body
}

// load sends getMarkPrice from two goroutines until stop.
type load struct {
	done      chan struct{}
	wg        sync.WaitGroup
	successes atomic.Int64
	mu        sync.Mutex
	replies   []loadReply
}

type loadReply struct {
	v1Reply
	err error
}

func (c *cluster) startLoad() *load {
	l := &load{done: make(chan struct{})}
	for range 2 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.done:
					return
				case <-time.After(2 * time.Millisecond): // pace, do not spin on instant 503s
				}
				r, err := c.v1(map[string]any{"operation": "getMarkPrice", "market": "SOL"})
				if err == nil && r.status == http.StatusOK {
					l.successes.Add(1)
				}
				l.mu.Lock()
				l.replies = append(l.replies, loadReply{r, err})
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// stop ends the load and returns every reply it got.
func (l *load) stop() []loadReply {
	close(l.done)
	l.wg.Wait()
	return l.replies
}

// farLimitOrder is a BTC buy 20% below mark: it rests without filling.
func (c *cluster) farLimitOrder(mark decimal.Decimal) map[string]any {
	price := mark.Mul(decimal.RequireFromString("0.8")).Round(0).String()
	return map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": price}
}
