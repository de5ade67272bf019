package edge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/perpgate/perpgate/pkg/contract"
)

// sseClient connects the official go-sdk SSE client to ts with key in the
// api_key query parameter of the GET; postKey, when set, goes in the
// X-API-Key header of every POST to the session.
func sseClient(ts *httptest.Server, key, postKey string) (*mcp.ClientSession, error) {
	endpoint := ts.URL + "/mcp/sse"
	if key != "" {
		endpoint += "?api_key=" + url.QueryEscape(key)
	}
	client := &http.Client{Transport: postHeader{key: postKey}}
	// The SSE transport ties its event stream to Connect's context.
	return mcp.NewClient(&mcp.Implementation{Name: "sse-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: client}, nil)
}

type postHeader struct{ key string }

func (p postHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && p.key != "" {
		r = r.Clone(r.Context())
		r.Header.Set("X-API-Key", p.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (h *mcpHarness) markPrice(cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_mark_price",
		Arguments: map[string]any{"credentialId": h.cred, "market": "BTC"}})
	if err == nil && res.IsError {
		err = fmt.Errorf("tool error %v", res.Content)
	}
	return err
}

// sseGet opens /mcp/sse with a raw GET and returns the status, the error
// envelope of a refusal, and the body (open on success; the caller closes
// it).
func sseGet(t *testing.T, rawURL string) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.Get(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		t.Cleanup(func() { resp.Body.Close() })
		return resp, nil
	}
	defer resp.Body.Close()
	var env map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&env)
	return resp, env
}

// TestMCPSSEGetNeedsKey: every GET to /mcp/sse needs a key, a sessionid in
// the query included (it used to open a session that served initialize
// and tools/list with no key at all).
func TestMCPSSEGetNeedsKey(t *testing.T) {
	h := newMCPHarness(t)
	ts := httptest.NewServer(h.srv.Handler())
	t.Cleanup(ts.Close)
	for _, path := range []string{"/mcp/sse", "/mcp/sse?sessionid=anything"} {
		resp, env := sseGet(t, ts.URL+path)
		if resp.StatusCode != http.StatusUnauthorized || env["code"] != string(contract.CodeMissingAPIKey) {
			t.Errorf("GET %s without a key: %d %v, want 401 MISSING_API_KEY", path, resp.StatusCode, env)
		}
	}
	anon := &mcp.SSEClientTransport{Endpoint: ts.URL + "/mcp/sse?sessionid=anything"}
	if cs, err := mcp.NewClient(&mcp.Implementation{Name: "sse-test", Version: "1"}, nil).Connect(context.Background(), anon, nil); err == nil {
		tools, err := cs.ListTools(context.Background(), nil)
		cs.Close()
		t.Fatalf("the go-sdk client initialized a session without a key (tools/list: %d tools, %v)", len(tools.Tools), err)
	}
	cs, err := sseClient(ts, h.raw[contract.TierBuilder], "")
	if err != nil {
		t.Fatalf("with a builder key: %v", err)
	}
	defer cs.Close()
	if err := h.markPrice(cs); err != nil {
		t.Fatal(err)
	}
}

// TestMCPSSEPostKey: standard SSE clients post to the session URL the
// server announced, which carries no key, so a POST without one is
// accepted; a POST carrying another key than the session's is refused.
func TestMCPSSEPostKey(t *testing.T) {
	h := newMCPHarness(t)
	ts := httptest.NewServer(h.srv.Handler())
	t.Cleanup(ts.Close)
	builder := h.raw[contract.TierBuilder]
	for name, postKey := range map[string]string{"no key": "", "the session's key": builder} {
		t.Run(name, func(t *testing.T) {
			cs, err := sseClient(ts, builder, postKey)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if err := h.markPrice(cs); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("another key", func(t *testing.T) {
		before := h.routed.Load()
		if cs, err := sseClient(ts, builder, h.raw[contract.TierPro]); err == nil {
			err = h.markPrice(cs)
			cs.Close()
			t.Fatalf("a session opened with one key took messages posted with another (tool call: %v)", err)
		}
		if n := h.routed.Load() - before; n != 0 {
			t.Errorf("%d calls reached the connector", n)
		}
		// The refusal itself, as a raw client sees it.
		resp, _ := sseGet(t, ts.URL+"/mcp/sse?api_key="+url.QueryEscape(builder))
		endpoint := announcedEndpoint(t, resp)
		req, _ := http.NewRequest(http.MethodPost, ts.URL+endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", h.raw[contract.TierPro])
		post, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer post.Body.Close()
		var env map[string]any
		_ = json.NewDecoder(post.Body).Decode(&env)
		if post.StatusCode != http.StatusUnauthorized || env["code"] != string(contract.CodeInvalidAPIKey) {
			t.Errorf("POST with another key: %d %v, want 401 INVALID_API_KEY", post.StatusCode, env)
		}
	})
}

// announcedEndpoint reads the endpoint event an SSE session starts with.
func announcedEndpoint(t *testing.T, resp *http.Response) string {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if strings.Contains(data, "api_key") {
				t.Errorf("the session URL %s carries the key", data)
			}
			return data
		}
	}
	t.Fatalf("no endpoint event: %v", sc.Err())
	return ""
}

// TestMCPSSEIdleSessionCloses: a session no message reached for
// MCPSessionIdle closes (its slot with it); one in use stays open.
func TestMCPSSEIdleSessionCloses(t *testing.T) {
	const idle = 300 * time.Millisecond
	h := newMCPHarness(t, func(c *Config) { c.MCPSessionIdle = idle })
	ts := httptest.NewServer(h.srv.Handler())
	t.Cleanup(ts.Close)
	builder := h.raw[contract.TierBuilder]
	busy, err := sseClient(ts, builder, "")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	quiet, err := sseClient(ts, builder, "")
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	for end := time.Now().Add(3 * idle); time.Now().Before(end); time.Sleep(idle / 3) {
		if err := h.markPrice(busy); err != nil {
			t.Fatalf("a session in use closed: %v", err)
		}
	}
	if err := h.markPrice(quiet); err == nil {
		t.Fatalf("a session idle for %s still answers", 3*idle)
	}
}

// TestMCPSSESessionCap: a key holds at most its tier's cap of open
// sessions (builder 10); one more is 429 RATE_LIMITED naming the cap, and
// a closed session frees its slot.
func TestMCPSSESessionCap(t *testing.T) {
	h := newMCPHarness(t)
	ts := httptest.NewServer(h.srv.Handler())
	t.Cleanup(ts.Close)
	builder := h.raw[contract.TierBuilder]
	limit := contract.TierBuilder.Limits().MaxStreams
	if limit != 10 {
		t.Fatalf("builder cap %d, DESIGN §13 says 10", limit)
	}
	var open []*mcp.ClientSession
	for i := range limit {
		cs, err := sseClient(ts, builder, "")
		if err != nil {
			t.Fatalf("session %d of %d: %v", i+1, limit, err)
		}
		open = append(open, cs)
	}
	defer func() {
		for _, cs := range open {
			cs.Close()
		}
	}()
	if cs, err := sseClient(ts, builder, ""); err == nil {
		cs.Close()
		t.Fatalf("session %d opened over the builder cap", limit+1)
	}
	resp, env := sseGet(t, ts.URL+"/mcp/sse?api_key="+url.QueryEscape(builder))
	msg, _ := env["error"].(string)
	if resp.StatusCode != http.StatusTooManyRequests || env["code"] != string(contract.CodeRateLimited) ||
		!strings.Contains(msg, "10 MCP SSE sessions open") || !strings.Contains(msg, "builder") {
		t.Errorf("over the cap: %d %v, want 429 RATE_LIMITED naming the cap", resp.StatusCode, env)
	}
	// Another key has its own slots.
	pro, err := sseClient(ts, h.raw[contract.TierPro], "")
	if err != nil {
		t.Fatalf("another key: %v", err)
	}
	pro.Close()

	open[0].Close()
	open = open[1:]
	deadline := time.Now().Add(5 * time.Second)
	for {
		cs, err := sseClient(ts, builder, "")
		if err == nil {
			open = append(open, cs)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed session's slot was not freed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
