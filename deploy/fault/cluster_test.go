package fault

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/admin"
)

// binaries builds the service binaries (once per test binary; testenv
// shares them with the other packages' tests) and returns their directory.
var (
	buildOnce sync.Once
	binDir    string
)

func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir = testenv.Build(t, "./services/keys/cmd/keys", "./services/edge/cmd/edge",
			"./services/connectors/paper/cmd/paper-venue", "./services/connectors/paper/cmd/connector-paper",
			"./services/connectors/binance/cmd/connector-binance", "./services/connectors/binance/cmd/binance-sim",
			"./services/connectors/hyperliquid/cmd/connector-hyperliquid", "./services/connectors/hyperliquid/cmd/hyperliquid-sim")
	})
	if binDir == "" {
		t.Fatal("service binaries were not built")
	}
	return binDir
}

// cluster is one distributed deployment: its own NATS and Redis, and the
// four services as processes.
type cluster struct {
	t         *testing.T
	NATS      *testenv.Daemon
	Redis     *testenv.Daemon
	Postgres  *testenv.Daemon // the keys service's database, with clusterOptions.Postgres
	Keys      *testenv.Process
	Edge      *testenv.Process
	Venue     *testenv.Process
	Connector *testenv.Process

	env     func(map[string]string) map[string]string
	bins    string
	Binance []*testenv.Process // connector-binance replicas, once binanceVenue ran

	EdgeURL    string
	AdminURL   string
	AdminToken string
	Admin      *admin.Client
	Account    string
	APIKey     string
	KeyID      string
	Cred       string
}

// clusterOptions tune a cluster.
type clusterOptions struct {
	PersistRedis   bool          // Redis writes every change to disk, as compose runs it
	RequestTimeout time.Duration // the edge's request deadline
	Postgres       bool          // keys keeps its store in a Postgres of the test's own, not in files
	NATSConf       string        // configuration lines of the nats-server
	NATSURL        string        // a NATS of the test's own making (a cluster); empty starts one
	Env            map[string]string
}

func newCluster(t *testing.T, opt clusterOptions) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("runs nats-server, redis-server and four service processes; skipped with -short")
	}
	if opt.RequestTimeout == 0 {
		opt.RequestTimeout = 3 * time.Second
	}
	bins := binaries(t)
	c := &cluster{t: t, Redis: testenv.RedisDaemon(t, opt.PersistRedis)}
	natsURL := opt.NATSURL
	if natsURL == "" {
		c.NATS = testenv.NATSDaemonConf(t, opt.NATSConf)
		natsURL = c.NATS.URL
	}
	base := map[string]string{
		"PERPGATE_NATS_URL":        natsURL,
		"PERPGATE_LOG_FORMAT":      "json",
		"PERPGATE_HEALTH_ADDR":     "127.0.0.1:0",
		"PERPGATE_REQUEST_TIMEOUT": opt.RequestTimeout.String(),
	}
	for k, v := range opt.Env {
		base[k] = v
	}
	env := func(more map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	c.env, c.bins = env, bins
	token := randomHex(t, 24)
	master := make([]byte, 32)
	_, _ = rand.Read(master)
	keysEnv := map[string]string{
		"PERPGATE_DATA_DIR": t.TempDir(), "PERPGATE_ADMIN_ADDR": "127.0.0.1:0",
		"PERPGATE_ADMIN_TOKEN": token, "PERPGATE_MASTER_KEY": base64.StdEncoding.EncodeToString(master),
	}
	if opt.Postgres {
		c.Postgres = testenv.PostgresDaemon(t)
		keysEnv["PERPGATE_DATABASE_URL"] = c.Postgres.URL
	}
	c.Keys = testenv.Start(t, "keys", filepath.Join(bins, "keys"), env(keysEnv))
	// A fixed port, so a restarted venue is where the connector looks;
	// its journal in a data dir, so a restart keeps its state.
	c.Venue = testenv.Start(t, "paper-venue", filepath.Join(bins, "paper-venue"), env(map[string]string{
		"PERPGATE_PAPER_VENUE_ADDR": fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)),
		"PERPGATE_DATA_DIR":         t.TempDir(),
	}))
	c.Edge = testenv.Start(t, "edge", filepath.Join(bins, "edge"), env(map[string]string{
		"PERPGATE_LISTEN_ADDR": "127.0.0.1:0", "PERPGATE_REDIS_URL": c.Redis.URL,
	}))
	c.Connector = testenv.Start(t, "connector-paper", filepath.Join(bins, "connector-paper"), env(map[string]string{
		"PERPGATE_PAPER_VENUE_URL": "http://" + c.Venue.Field(t, "paper venue started", "addr"),
		"PERPGATE_REDIS_URL":       c.Redis.URL,
	}))
	c.EdgeURL = "http://" + c.Edge.Field(t, "edge listening", "addr")
	c.AdminURL, c.AdminToken = "http://"+c.Keys.Field(t, "keys service started", "admin_addr"), token
	c.Admin = admin.NewClient(c.AdminURL, token)
	ctx := context.Background()
	var acct admin.AccountResponse
	testenv.Poll(t, "admin API answers", 10*time.Second, func() (err error) {
		acct, err = c.Admin.CreateAccount(ctx, contract.TierBuilder, "fault")
		return err
	})
	c.Account = acct.ID
	cred, err := c.Admin.CreateCredential(ctx, acct.ID, admin.CredentialRequest{
		Exchange: contract.Paper, Env: contract.Testnet, Label: "fault", Secret: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	c.Cred = cred.ID
	c.APIKey, c.KeyID = c.newKey()
	testenv.Poll(t, "getMarkPrice through the cluster", 15*time.Second, func() error {
		if r := c.Call(c.APIKey, map[string]any{"operation": "getMarkPrice", "market": "BTC"}); r.Status != 200 {
			return fmt.Errorf("%d %s", r.Status, r.Raw)
		}
		return nil
	})
	return c
}

func (c *cluster) newKey() (key, id string) {
	c.t.Helper()
	k, err := c.Admin.CreateKey(context.Background(), c.Account, admin.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		c.t.Fatal(err)
	}
	return k.Key, k.ID
}

// reply is one /v1 answer.
type reply struct {
	Status int
	Header http.Header
	Raw    string
	Body   map[string]any
	Took   time.Duration
}

func (r reply) code() string { s, _ := r.Body["code"].(string); return s }

// Call posts body (with the cluster's credential unless it names one) to
// the edge with key.
func (c *cluster) Call(key string, body map[string]any) reply {
	if _, ok := body["credentialId"]; !ok {
		body["credentialId"] = c.Cred
	}
	return post(c.EdgeURL, key, body)
}

// post calls /v1 at the base url with key; a transport failure is status 0.
func post(url, key string, body map[string]any) reply {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url+"/v1", bytes.NewReader(b))
	req.Header.Set("X-API-Key", key)
	start := time.Now()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return reply{Raw: err.Error(), Took: time.Since(start)}
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: buf.String(), Took: time.Since(start)}
	_ = json.Unmarshal(buf.Bytes(), &r.Body)
	return r
}

// openOrders returns the open orders with clientOrderId id.
func (c *cluster) openOrders(id string) []map[string]any {
	c.t.Helper()
	r := c.Call(c.APIKey, map[string]any{"operation": "getOrders", "market": "BTC"})
	if r.Status != 200 {
		c.t.Fatalf("getOrders: %d %s", r.Status, r.Raw)
	}
	var out []map[string]any
	orders, _ := r.Body["orders"].([]any)
	for _, o := range orders {
		if m, _ := o.(map[string]any); m["clientOrderId"] == id {
			out = append(out, m)
		}
	}
	return out
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// restingBuy is a limit order far below the paper mark, so it stays open.
func restingBuy(id, size string) map[string]any {
	return map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": size,
		"price": "30000", "clientOrderId": id}
}

// binanceVenue starts a Binance simulator process and replicas of
// connector-binance on it (sharing the cluster's Redis), and returns a
// testnet credential for the simulator's key.
func (c *cluster) binanceVenue(replicas int) string {
	c.t.Helper()
	port := testenv.FreePort(c.t)
	apiKey, secret := "fault-binance-key", "fault-binance-secret-"+randomHex(c.t, 8)
	testenv.Start(c.t, "binance-sim", filepath.Join(c.bins, "binance-sim"), map[string]string{
		"PERPGATE_BINANCE_SIM_ADDR": fmt.Sprintf("127.0.0.1:%d", port),
		"PERPGATE_BINANCE_SIM_KEYS": apiKey + ":" + secret,
	})
	for i := range replicas {
		c.Binance = append(c.Binance, testenv.Start(c.t, fmt.Sprintf("connector-binance-%d", i), filepath.Join(c.bins, "connector-binance"), c.env(map[string]string{
			"PERPGATE_BINANCE_URL": fmt.Sprintf("http://127.0.0.1:%d", port),
			"PERPGATE_REDIS_URL":   c.Redis.URL,
		})))
	}
	cred, err := c.Admin.CreateCredential(context.Background(), c.Account, admin.CredentialRequest{
		Exchange: contract.Binance, Env: contract.Testnet, Label: "fault-binance",
		Secret: json.RawMessage(`{"apiKey":"` + apiKey + `","apiSecret":"` + secret + `"}`)})
	if err != nil {
		c.t.Fatal(err)
	}
	testenv.Poll(c.t, "getBalance on the Binance simulator", 15*time.Second, func() error {
		if r := c.Call(c.APIKey, map[string]any{"operation": "getBalance", "credentialId": cred.ID}); r.Status != 200 {
			return fmt.Errorf("%d %s", r.Status, r.Raw)
		}
		return nil
	})
	return cred.ID
}

// Made-up Hyperliquid keys for the simulator: the master account's and an
// API wallet's, with their addresses.
const (
	hlMasterAddress = "0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a" // key 0x11…11
	hlAgentKey      = "0x2222222222222222222222222222222222222222222222222222222222222222"
	hlAgentAddress  = "0x1563915e194d8cfba1943570603f7606a3115508"
)

// hyperliquidVenue starts a Hyperliquid simulator process (the master
// funded, the agent approved) and connector-hyperliquid on it, and returns
// a testnet credential.
func (c *cluster) hyperliquidVenue() string {
	c.t.Helper()
	port := testenv.FreePort(c.t)
	testenv.Start(c.t, "hyperliquid-sim", filepath.Join(c.bins, "hyperliquid-sim"), map[string]string{
		"HYPERLIQUID_SIM_ADDR": fmt.Sprintf("127.0.0.1:%d", port), "HYPERLIQUID_SIM_ACCOUNT": hlMasterAddress,
		"HYPERLIQUID_SIM_AGENT": hlAgentAddress,
	})
	testenv.Start(c.t, "connector-hyperliquid", filepath.Join(c.bins, "connector-hyperliquid"), c.env(map[string]string{
		"PERPGATE_HYPERLIQUID_URL": fmt.Sprintf("http://127.0.0.1:%d", port),
		"PERPGATE_REDIS_URL":       c.Redis.URL,
	}))
	cred, err := c.Admin.CreateCredential(context.Background(), c.Account, admin.CredentialRequest{
		Exchange: contract.Hyperliquid, Env: contract.Testnet, Label: "fault-hyperliquid",
		Secret: json.RawMessage(`{"accountAddress":"` + hlMasterAddress + `","agentPrivateKey":"` + hlAgentKey + `"}`)})
	if err != nil {
		c.t.Fatal(err)
	}
	testenv.Poll(c.t, "getBalance on the Hyperliquid simulator", 15*time.Second, func() error {
		if r := c.Call(c.APIKey, map[string]any{"operation": "getBalance", "credentialId": cred.ID}); r.Status != 200 {
			return fmt.Errorf("%d %s", r.Status, r.Raw)
		}
		return nil
	})
	return cred.ID
}

// stopNATS stops the cluster's nats-server and returns once the edge has
// noticed (it logs "nats disconnected"). The server's exit reaches the
// edge's connection asynchronously: a request that got there first would
// be sent on the dead connection and wait out its deadline, where the
// test means to see one refused at once because the bus is known down.
func (c *cluster) stopNATS(t *testing.T) {
	t.Helper()
	before := c.edgeLogged("nats disconnected")
	c.NATS.Stop()
	testenv.Poll(t, "the edge notices NATS is gone", 10*time.Second, func() error {
		if c.edgeLogged("nats disconnected") == before {
			return errorf("no new \"nats disconnected\" line")
		}
		return nil
	})
}

// edgeLogged counts the edge's log lines with message msg.
func (c *cluster) edgeLogged(msg string) int {
	n := 0
	for _, rec := range c.Edge.Records() {
		if rec["msg"] == msg {
			n++
		}
	}
	return n
}
