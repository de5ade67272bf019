package standalone

import (
	"bufio"
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
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	bins := buildBinaries(t, "keys", "edge", "paper-venue", "connector-paper")

	// The prefix scopes NATS subjects and, through the edge (prefix+":rl")
	// and the connectors (prefix+":idem:"), Redis keys that RedisPrefix
	// deletes when the test ends.
	c := newCluster(t, bins, map[string]string{
		"PERPGATE_NATS_URL":       natsURL,
		"PERPGATE_SUBJECT_PREFIX": prefix,
		"PERPGATE_LOG_FORMAT":     "json",
		"PERPGATE_HEALTH_ADDR":    "127.0.0.1:0",
		// A race-enabled binary otherwise sleeps 1 s on exit.
		"GORACE": "atexit_sleep_ms=0",
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

	connector.stop()
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
	replicas := []*process{
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
			if perReplica[p.name] == 0 {
				t.Errorf("%s served none of %d requests: %v", p.name, len(ids), perReplica)
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
	replicas[0].stop()
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

// buildBinaries builds the named commands of the workspace into a temp dir
// and returns it. They are built with -race when the test binary is, so
// the services' own races fail this test too.
func buildBinaries(t *testing.T, names ...string) string {
	t.Helper()
	root := workspaceRoot(t)
	pkgs := map[string]string{
		"keys":            "./services/keys/cmd/keys",
		"edge":            "./services/edge/cmd/edge",
		"paper-venue":     "./services/connectors/paper/cmd/paper-venue",
		"connector-paper": "./services/connectors/paper/cmd/connector-paper",
	}
	dir := t.TempDir()
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if raceEnabled() {
		args = append(args, "-race")
	}
	for _, n := range names {
		args = append(args, pkgs[n])
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("built %s in %s", strings.Join(names, ", "), time.Since(start).Round(time.Millisecond))
	return dir
}

// workspaceRoot walks up from the working directory to the go.work file.
func workspaceRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the working directory")
		}
		dir = parent
	}
}

func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
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

// process is one started binary with its stdout and stderr.
type process struct {
	name     string
	cmd      *exec.Cmd
	out      *syncBuffer
	done     chan struct{} // closed once the process has exited
	err      error         // Wait's result; read only after done
	stopping atomic.Bool   // set when the test itself stops the process
	stopOnce sync.Once
	t        *testing.T
}

// stop sends SIGTERM and waits for a clean exit; a process that takes more
// than 10 s is killed. Either failure, or a non-zero exit, fails the test.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		reported := p.stopping.Swap(true)
		select {
		case <-p.done:
			if !reported {
				p.t.Errorf("%s exited before the test stopped it (%v); output:\n%s", p.name, p.err, p.out)
			}
			return
		default:
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			p.t.Errorf("%s: SIGTERM: %v", p.name, err)
		}
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			p.t.Errorf("%s did not exit within 10s of SIGTERM; output:\n%s", p.name, p.out)
			return
		}
		if p.err != nil {
			p.t.Errorf("%s exited with %v after SIGTERM; output:\n%s", p.name, p.err, p.out)
		}
	})
}

// records returns the JSON log lines of the process decoded; other lines
// (such as a race report) are left out.
func (p *process) records() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.out.String()))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// servedBy maps each request id in the replicas' "request done" log lines
// to the names of the replicas that logged it.
func servedBy(replicas []*process) map[string][]string {
	served := map[string][]string{}
	for _, p := range replicas {
		for _, rec := range p.records() {
			if id, _ := rec["request_id"].(string); rec["msg"] == "request done" && id != "" {
				served[id] = append(served[id], p.name)
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
	procs                         []*process
	http                          *http.Client
	edgeURL, apiKey, credentialID string
}

// newCluster returns an empty cluster; when the test fails, the output of
// every process is logged after they have all stopped.
func newCluster(t *testing.T, bins string, env map[string]string) *cluster {
	c := &cluster{t: t, bins: bins, env: env, http: &http.Client{Timeout: 15 * time.Second}}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, p := range c.procs {
			out := p.out.String()
			if len(out) > 16<<10 {
				out = "...\n" + out[len(out)-16<<10:]
			}
			t.Logf("output of %s:\n%s", p.name, out)
		}
	})
	return c
}

// start runs binary bin with the cluster's settings plus env, and nothing
// else from the test's environment. The process is stopped when the test
// ends.
func (c *cluster) start(name, bin string, env map[string]string) *process {
	c.t.Helper()
	vars := map[string]string{}
	for k, v := range c.env {
		vars[k] = v
	}
	for k, v := range env {
		vars[k] = v
	}
	list := make([]string, 0, len(vars))
	for k, v := range vars {
		list = append(list, k+"="+v)
	}
	sort.Strings(list)
	p := &process{name: name, out: &syncBuffer{}, done: make(chan struct{}), t: c.t}
	p.cmd = exec.Command(filepath.Join(c.bins, bin))
	p.cmd.Env = list
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	c.procs = append(c.procs, p)
	c.t.Cleanup(p.stop)
	return p
}

// check fails the test when a process has exited that the test did not stop.
func (c *cluster) check(t testing.TB) {
	t.Helper()
	for _, p := range c.procs {
		select {
		case <-p.done:
			if !p.stopping.Load() {
				p.stopping.Store(true) // reported once
				t.Fatalf("%s exited early (%v); output:\n%s", p.name, p.err, p.out)
			}
		default:
		}
	}
}

// poll calls f until it returns nil, failing the test after timeout or as
// soon as a process dies.
func (c *cluster) poll(t testing.TB, what string, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c.check(t)
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLog waits for the first log line of p with message msg.
func (c *cluster) waitLog(t testing.TB, p *process, msg string) map[string]any {
	t.Helper()
	var found map[string]any
	c.poll(t, fmt.Sprintf("%s logs %q", p.name, msg), 15*time.Second, func() error {
		for _, rec := range p.records() {
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
func (c *cluster) addr(t testing.TB, p *process, msg, field string) string {
	t.Helper()
	a, _ := c.waitLog(t, p, msg)[field].(string)
	if a == "" {
		t.Fatalf("%s: %q line has no %s", p.name, msg, field)
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
