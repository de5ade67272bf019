package standalone

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// headerTransport adds the API key to every request the MCP client sends.
type headerTransport struct {
	key    string
	bearer bool
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.bearer {
		r.Header.Set("Authorization", "Bearer "+h.key)
	} else if h.key != "" {
		r.Header.Set("X-API-Key", h.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpTransports are the two ways an agent connects: streamable HTTP with
// the key in a header, and SSE with the key in the api_key parameter.
func mcpTransports(g *testGateway) map[string]func(key string) mcp.Transport {
	return map[string]func(string) mcp.Transport{
		"streamable": func(key string) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: g.URL() + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
				HTTPClient: &http.Client{Transport: headerTransport{key: key, bearer: true}}}
		},
		"sse": func(key string) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: g.URL() + "/mcp/sse?api_key=" + key}
		},
	}
}

func connectMCP(t *testing.T, tr mcp.Transport) (*mcp.ClientSession, error) {
	t.Helper()
	// The SSE transport ties its event stream to Connect's context, so it
	// must outlive this call; the session is closed at cleanup instead.
	c := mcp.NewClient(&mcp.Implementation{Name: "perpgate-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s: want one content block, got %d", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: content is %T, want text", name, res.Content[0])
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(text.Text), &body); err != nil {
		t.Fatalf("call %s: text block is not JSON: %q", name, text.Text)
	}
	if !res.IsError {
		structured, _ := json.Marshal(res.StructuredContent)
		if string(structured) == "null" || !jsonEqual(t, structured, []byte(text.Text)) {
			t.Fatalf("call %s: structured content %s differs from text %s", name, structured, text.Text)
		}
	}
	return res, body
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

func wantToolError(t *testing.T, res *mcp.CallToolResult, body map[string]any, code contract.Code) {
	t.Helper()
	if !res.IsError || body["code"] != string(code) || body["success"] != false || body["error"] == "" {
		t.Fatalf("want tool error %s, got isError=%v %v", code, res.IsError, body)
	}
}

func TestMCP(t *testing.T) {
	g := startGateway(t)
	cred := g.Bootstrap().CredentialID
	for name, transport := range mcpTransports(g) {
		t.Run(name, func(t *testing.T) {
			cs, err := connectMCP(t, transport(g.Bootstrap().APIKey))
			if err != nil {
				t.Fatalf("initialize: %v", err)
			}
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				op, ok := contract.LookupTool(tool.Name)
				if !ok {
					t.Errorf("tool %s maps to no operation", tool.Name)
					continue
				}
				if tool.Annotations == nil || tool.Annotations.ReadOnlyHint != op.ReadOnly || *tool.Annotations.DestructiveHint == op.ReadOnly {
					t.Errorf("tool %s annotations do not mark read-only vs destructive", tool.Name)
				}
				if !strings.Contains(tool.Description, "tier") || tool.InputSchema == nil {
					t.Errorf("tool %s lacks description or schema", tool.Name)
				}
			}
			if len(names) != 20 {
				t.Fatalf("want 20 tools, got %d: %v", len(names), names)
			}
			sort.Strings(names)
			seen := map[string]bool{}
			for _, n := range names {
				op, _ := contract.LookupTool(n)
				if seen[op.Name] {
					t.Fatalf("two tools for %s", op.Name)
				}
				seen[op.Name] = true
			}

			_, mark := callTool(t, cs, "get_mark_price", map[string]any{"credentialId": cred, "market": "BTC"})
			if checkKind(mark["markPrice"], decStr) != nil {
				t.Fatalf("get_mark_price: %v", mark)
			}
			_, placed := callTool(t, cs, "place_limit_order", map[string]any{"credentialId": cred, "market": "ETH",
				"side": "BUY", "size": "0.5", "price": "1000"})
			if placed["status"] != "OPEN" {
				t.Fatalf("place_limit_order: %v", placed)
			}
			_, orders := callTool(t, cs, "get_orders", map[string]any{"credentialId": cred, "market": "ETH"})
			found := false
			for _, o := range objects(t, orders["orders"]) {
				found = found || o["id"] == placed["orderId"]
			}
			if !found {
				t.Fatalf("get_orders lacks %v: %v", placed["orderId"], orders)
			}
			res, cancel := callTool(t, cs, "cancel_order", map[string]any{"credentialId": cred, "orderId": placed["orderId"]})
			if res.IsError {
				t.Fatalf("cancel_order: %v", cancel)
			}
			res, body := callTool(t, cs, "place_limit_order", map[string]any{"credentialId": cred, "market": "ETH", "side": "BUY", "size": "0.5"})
			wantToolError(t, res, body, contract.CodeInvalidRequest)
			if !strings.Contains(body["error"].(string), `"price"`) {
				t.Fatalf("missing-field error should name price: %v", body)
			}
			if os := g.orders("ETH"); len(os) != 0 {
				t.Fatalf("an invalid call must route nothing: %v", os)
			}
		})
	}
}

func TestMCPErrors(t *testing.T) {
	g := startGateway(t, func(c *Config) {
		c.Edge.TierLimits[contract.TierPro] = contract.TierLimits{PerMinute: 2, PerDay: 100}
	})
	cred := g.Bootstrap().CredentialID
	free := g.newKey(g.newAccount(contract.TierFree), keys.KeyRequest{Env: contract.KeyEnvTest})
	scoped := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, AllowedOperations: []string{"getMarkPrice"}})
	proAcct := g.newAccount(contract.TierPro)
	pro := g.newKey(proAcct, keys.KeyRequest{Env: contract.KeyEnvTest})
	proCred := g.newCredential(proAcct, contract.Paper, contract.Testnet, `{}`)

	for name, transport := range mcpTransports(g) {
		revoked := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest})
		t.Run(name, func(t *testing.T) {
			for _, tt := range []struct {
				name, key, want string
			}{
				{"missing key", "", "MISSING_API_KEY"},
				{"free key", free, "TIER_INSUFFICIENT"},
				{"unknown key", "mt_test_" + strings.Repeat("x", 43), "INVALID_API_KEY"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					_, err := connectMCP(t, transport(tt.key))
					if err == nil {
						t.Fatalf("connect with %s should fail", tt.name)
					}
					// The refusal is the /v1 envelope; check it over plain HTTP too.
					r := mcpProbe(t, g, name, tt.key)
					if r.code() != tt.want || (r.status != 401 && r.status != 403) {
						t.Fatalf("want %s, got %d %s", tt.want, r.status, r.raw)
					}
				})
			}

			cs, err := connectMCP(t, transport(scoped))
			if err != nil {
				t.Fatal(err)
			}
			res, body := callTool(t, cs, "get_balance", map[string]any{"credentialId": cred})
			wantToolError(t, res, body, contract.CodeOperationNotAllowed)

			cs, err = connectMCP(t, transport(revoked))
			if err != nil {
				t.Fatal(err)
			}
			callTool(t, cs, "get_mark_price", map[string]any{"credentialId": cred, "market": "BTC"})
			if _, err := g.Keys().RevokeKey(context.Background(), keyID(t, g, revoked)); err != nil {
				t.Fatal(err)
			}
			checkFor(t, time.Second, 20*time.Millisecond, func() error {
				if name == "streamable" {
					// Every streamable request passes the HTTP gate: a revoked
					// key is refused there with the /v1 envelope.
					if r := mcpProbe(t, g, name, revoked); r.status != 401 || r.code() != "KEY_REVOKED" {
						return errString("still accepted after revocation: " + string(r.raw))
					}
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_mark_price", Arguments: map[string]any{"credentialId": cred, "market": "BTC"}})
					if err == nil || !strings.Contains(err.Error(), "Unauthorized") {
						return errString("tool call after revocation did not fail as unauthorized")
					}
					return nil
				}
				// An open SSE session re-checks the key on every call.
				res, body := callTool(t, cs, "get_mark_price", map[string]any{"credentialId": cred, "market": "BTC"})
				if !res.IsError || body["code"] != "KEY_REVOKED" {
					return errString("still served after revocation")
				}
				return nil
			})
		})
	}

	t.Run("rate limit", func(t *testing.T) {
		cs, err := connectMCP(t, mcpTransports(g)["streamable"](pro))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if res, body := callTool(t, cs, "get_mark_price", map[string]any{"credentialId": proCred, "market": "BTC"}); res.IsError {
				t.Fatalf("within the limit: %v", body)
			}
		}
		res, body := callTool(t, cs, "get_mark_price", map[string]any{"credentialId": proCred, "market": "BTC"})
		wantToolError(t, res, body, contract.CodeRateLimited)
		if !strings.Contains(body["error"].(string), "seconds") || body["retryAfter"] == nil {
			t.Fatalf("rate-limit error should say when to retry: %v", body)
		}
	})
}

type errString string

func (e errString) Error() string { return string(e) }

// keyID finds the id of a raw key through the keys service.
func keyID(t *testing.T, g *testGateway, raw string) string {
	t.Helper()
	ks, err := g.Keys().ListKeys(context.Background(), g.Bootstrap().AccountID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if k.Display == raw[:12] {
			return k.ID
		}
	}
	t.Fatalf("key %s not found", raw[:12])
	return ""
}

// mcpProbe sends the first request of a transport by hand to read the
// refusal's status and body.
func mcpProbe(t *testing.T, g *testGateway, transport, key string) response {
	t.Helper()
	var req *http.Request
	if transport == "sse" {
		req, _ = http.NewRequest(http.MethodGet, g.URL()+"/mcp/sse?api_key="+key, nil)
	} else {
		req, _ = http.NewRequest(http.MethodPost, g.URL()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	return g.do(req)
}
