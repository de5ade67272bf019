package standalone

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
)

// testGateway is a standalone gateway started for one test, with all its
// logs (debug level) and banner captured.
type testGateway struct {
	*Gateway
	t    *testing.T
	logs *testenv.Output
}

// startGateway runs a gateway on free ports in a temp dir; mutate adjusts
// the config before start.
func startGateway(t *testing.T, mutate ...func(*Config)) *testGateway {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.AdminAddr = "127.0.0.1:0"
	cfg.Edge.ListenAddr = "127.0.0.1:0"
	cfg.Edge.RequestTimeout = 5 * time.Second
	for _, m := range mutate {
		m(&cfg)
	}
	logs := &testenv.Output{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gw, err := New(cfg, log, logs)
	if err != nil {
		t.Fatalf("new gateway: %v", err)
	}
	if err := gw.Start(context.Background()); err != nil {
		t.Fatalf("start gateway: %v", err)
	}
	t.Cleanup(func() {
		if err := gw.Close(); err != nil {
			t.Errorf("close gateway: %v", err)
		}
	})
	return &testGateway{Gateway: gw, t: t, logs: logs}
}

// response is one /v1 answer, decoded loosely so tests can check wire types.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r response) code() string { s, _ := r.body["code"].(string); return s }

// call posts a /v1 request with the bootstrap credential filled in unless
// the body sets credentialId itself.
func (g *testGateway) call(key string, body map[string]any) response {
	g.t.Helper()
	if _, ok := body["credentialId"]; !ok {
		body["credentialId"] = g.Bootstrap().CredentialID
	}
	b, _ := json.Marshal(body)
	return g.post(key, b)
}

func (g *testGateway) post(key string, body []byte) response {
	g.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL()+"/v1", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	return g.do(req)
}

func (g *testGateway) do(req *http.Request) response {
	g.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		g.t.Fatalf("%s %s: response is not a JSON object: %q", req.Method, req.URL, raw)
	}
	return r
}

// ok calls and fails the test unless the answer is a success.
func (g *testGateway) ok(body map[string]any) map[string]any {
	g.t.Helper()
	op := body["operation"]
	r := g.call(g.Bootstrap().APIKey, body)
	if r.status != http.StatusOK || r.body["success"] != true {
		g.t.Fatalf("%v: status %d body %s", op, r.status, r.raw)
	}
	return r.body
}

// newKey creates an API key on the bootstrap account (or acct) through the
// keys service.
func (g *testGateway) newKey(acct string, req keys.KeyRequest) string {
	g.t.Helper()
	if acct == "" {
		acct = g.Bootstrap().AccountID
	}
	k, err := g.Keys().CreateKey(context.Background(), acct, req)
	if err != nil {
		g.t.Fatalf("create key: %v", err)
	}
	return k.Key.Reveal()
}

func (g *testGateway) newAccount(tier contract.Tier) string {
	g.t.Helper()
	a, err := g.Keys().CreateAccount(context.Background(), tier, "test-"+string(tier))
	if err != nil {
		g.t.Fatalf("create account: %v", err)
	}
	return a.ID
}

func (g *testGateway) newCredential(acct string, x contract.Exchange, env contract.Environment, secret string) string {
	g.t.Helper()
	c, err := g.Keys().CreateCredential(context.Background(), acct, keys.CredentialRequest{
		Exchange: x, Env: env, Label: "test", Secret: json.RawMessage(secret)})
	if err != nil {
		g.t.Fatalf("create credential: %v", err)
	}
	return c.ID
}

// checkFor polls until f returns nil or the deadline passes.
func checkFor(t *testing.T, total, every time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(every)
	}
	t.Fatalf("not true within %s: %v", total, err)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestMain(m *testing.M) {
	// The tests' child processes (CLI calls, load generators) are race
	// builds under -race, and those sleep 1 s as they exit unless told not to.
	if os.Getenv("GORACE") == "" {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}
