package standalone

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// These tests drive the standalone gateway's MCP front end (issue 3) with
// the go-sdk's own client over real HTTP, through both transports.

// mcpRecorder is the client's HTTP transport: it adds the API key (as a
// header, when set) and keeps every refused answer, so a refusal at the
// HTTP gate can be read as the /v1 error envelope the client received.
type mcpRecorder struct {
	key    string
	header string // "Authorization" (Bearer) or "X-API-Key"; empty sends no header

	mu       sync.Mutex
	refusals []response
}

func (r *mcpRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	switch r.header {
	case "Authorization":
		req.Header.Set("Authorization", "Bearer "+r.key)
	case "X-API-Key":
		req.Header.Set("X-API-Key", r.key)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	rec := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	_ = json.Unmarshal(raw, &rec.body)
	r.mu.Lock()
	r.refusals = append(r.refusals, rec)
	r.mu.Unlock()
	return resp, nil
}

// lastRefusal is the last refused HTTP answer the client got.
func (r *mcpRecorder) lastRefusal(t *testing.T) response {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.refusals) == 0 {
		t.Fatal("the client got no refused HTTP answer")
	}
	return r.refusals[len(r.refusals)-1]
}

// mcpTransport builds one of the two ways an agent connects: "streamable"
// (/mcp, key in Authorization: Bearer) or "sse" (/mcp/sse, key in the
// api_key query parameter).
func mcpTransport(g *testGateway, name string, rec *mcpRecorder) mcp.Transport {
	client := &http.Client{Transport: rec}
	if name == "sse" {
		rec.header = ""
		return &mcp.SSEClientTransport{Endpoint: g.URL() + "/mcp/sse?api_key=" + url.QueryEscape(rec.key), HTTPClient: client}
	}
	if rec.header == "" {
		rec.header = "Authorization"
	}
	return &mcp.StreamableClientTransport{Endpoint: g.URL() + "/mcp", MaxRetries: -1, HTTPClient: client}
}

var mcpTransportNames = []string{"streamable", "sse"}

// mcpClient is a connected go-sdk client session plus the output schemas
// tools/list announced, against which every success is checked.
type mcpClient struct {
	t   *testing.T
	cs  *mcp.ClientSession
	rec *mcpRecorder
	out map[string]*jsonschema.Resolved
}

// connectMCP initializes a session; on refusal it returns the error and
// the recorder holding the refused answer.
func connectMCP(t *testing.T, g *testGateway, transport, key string) (*mcpClient, *mcpRecorder, error) {
	t.Helper()
	rec := &mcpRecorder{key: key}
	c := mcp.NewClient(&mcp.Implementation{Name: "perpgate-test", Version: "1"}, nil)
	// The SSE transport ties its event stream to Connect's context, so it
	// must outlive this call; the session is closed at cleanup instead.
	cs, err := c.Connect(context.Background(), mcpTransport(g, transport, rec), nil)
	if err != nil {
		return nil, rec, err
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpClient{t: t, cs: cs, rec: rec}, rec, nil
}

func mustConnectMCP(t *testing.T, g *testGateway, transport, key string) *mcpClient {
	t.Helper()
	c, _, err := connectMCP(t, g, transport, key)
	if err != nil {
		t.Fatalf("initialize over %s: %v", transport, err)
	}
	return c
}

func (c *mcpClient) listTools() []*mcp.Tool {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		c.t.Fatalf("tools/list: %v", err)
	}
	c.out = map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		raw, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			c.t.Fatalf("%s: output schema does not parse: %v", tool.Name, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			c.t.Fatalf("%s: output schema does not resolve: %v", tool.Name, err)
		}
		c.out[tool.Name] = rs
	}
	return list.Tools
}

// call runs a tool and checks the result's shape: one JSON text block; on
// success the same object as structured content, valid against the tool's
// output schema; on a tool error no structured content.
func (c *mcpClient) call(name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	c.t.Helper()
	res, err := c.try(name, args)
	if err != nil {
		c.t.Fatalf("call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		c.t.Fatalf("call %s: want one content block, got %d", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		c.t.Fatalf("call %s: content is %T, want text", name, res.Content[0])
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(text.Text), &body); err != nil {
		c.t.Fatalf("call %s: text block is not a JSON object: %q", name, text.Text)
	}
	if res.IsError {
		if res.StructuredContent != nil {
			c.t.Fatalf("call %s: a tool error carries structured content %v", name, res.StructuredContent)
		}
		return res, body
	}
	var structured any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &structured)
	if !jsonEqual(structured, body) {
		c.t.Fatalf("call %s: structured content %s differs from text %s", name, b, text.Text)
	}
	if c.out == nil {
		c.listTools()
	}
	if err := c.out[name].Validate(structured); err != nil {
		c.t.Fatalf("call %s: structured content %s fails the output schema: %v", name, b, err)
	}
	return res, body
}

func (c *mcpClient) try(name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

func (c *mcpClient) ok(name string, args map[string]any) map[string]any {
	c.t.Helper()
	res, body := c.call(name, args)
	if res.IsError {
		c.t.Fatalf("call %s: tool error %v", name, body)
	}
	return body
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// wantToolError checks a tool error: the /v1 envelope with the code and
// message wanted.
func wantToolError(t *testing.T, res *mcp.CallToolResult, body map[string]any, code contract.Code, msg string) {
	t.Helper()
	if !res.IsError || body["success"] != false || body["code"] != string(code) || body["error"] != msg {
		t.Fatalf("want tool error %s %q, got isError=%v %v", code, msg, res.IsError, body)
	}
}

// sameAsV1 sends the tool's operation to POST /v1 with the same key and
// arguments and returns what /v1 answered, to compare code and message.
func sameAsV1(g *testGateway, key, tool string, args map[string]any) response {
	g.t.Helper()
	op, _ := contract.LookupTool(tool)
	body := map[string]any{"operation": op.Name}
	for k, v := range args {
		body[k] = v
	}
	return g.call(key, body)
}

// TestMCP: initialize, tools/list (exactly the 20 tools, one per
// operation, with the table's schemas), a mark price on paper, and a limit
// order placed, listed and cancelled, over each transport.
func TestMCP(t *testing.T) {
	g := startGateway(t)
	cred := g.Bootstrap().CredentialID
	for _, transport := range mcpTransportNames {
		t.Run(transport, func(t *testing.T) {
			c := mustConnectMCP(t, g, transport, g.Bootstrap().APIKey)
			init := c.cs.InitializeResult()
			if init == nil || init.ServerInfo == nil || init.ServerInfo.Name != "perpgate" || init.Capabilities.Tools == nil ||
				!strings.Contains(init.Instructions, "mainnet") {
				t.Fatalf("initialize result: %+v", init)
			}

			tools := c.listTools()
			var names []string
			byOp := map[string]string{}
			for _, tool := range tools {
				names = append(names, tool.Name)
				op, ok := contract.LookupTool(tool.Name)
				if !ok {
					t.Errorf("tool %s maps to no operation", tool.Name)
					continue
				}
				if prev, dup := byOp[op.Name]; dup {
					t.Errorf("tools %s and %s both map to %s", prev, tool.Name, op.Name)
				}
				byOp[op.Name] = tool.Name
				if !jsonEqual(tool.InputSchema, op.InputSchema()) || !jsonEqual(tool.OutputSchema, op.OutputSchema()) {
					t.Errorf("tool %s: schemas are not the operation table's", tool.Name)
				}
				if tool.Annotations == nil || tool.Annotations.ReadOnlyHint != op.ReadOnly ||
					tool.Annotations.DestructiveHint == nil || *tool.Annotations.DestructiveHint == op.ReadOnly {
					t.Errorf("tool %s: annotations do not mark read-only vs destructive: %+v", tool.Name, tool.Annotations)
				}
				if !strings.Contains(tool.Description, op.Summary) {
					t.Errorf("tool %s: description is not the table's summary", tool.Name)
				}
			}
			sort.Strings(names)
			if len(tools) != len(contract.Operations) || len(byOp) != len(contract.Operations) {
				t.Fatalf("want one tool per operation (%d), got %d: %v", len(contract.Operations), len(tools), names)
			}

			mark := c.ok("get_mark_price", map[string]any{"credentialId": cred, "market": "BTC"})
			if checkKind(mark["markPrice"], decStr) != nil || !dec(t, mark["markPrice"]).IsPositive() ||
				checkKind(mark["indexPrice"], decStr) != nil {
				t.Fatalf("get_mark_price: %v", mark)
			}

			// Far below the mark, so the order rests.
			price := dec(t, mark["markPrice"]).Div(decimal.NewFromInt(2)).Round(0).String()
			placed := c.ok("place_limit_order", map[string]any{"credentialId": cred, "market": "BTC",
				"side": "BUY", "size": "0.01", "price": price})
			id, _ := placed["orderId"].(string)
			if id == "" || placed["status"] != "OPEN" || placed["market"] != "BTC-USD-PERP" || placed["price"] != price {
				t.Fatalf("place_limit_order: %v", placed)
			}
			listed := func() map[string]any {
				for _, o := range objects(t, c.ok("get_orders", map[string]any{"credentialId": cred, "market": "BTC"})["orders"]) {
					if o["id"] == id {
						return o
					}
				}
				return nil
			}
			if o := listed(); o == nil || o["status"] != "OPEN" || o["size"] != "0.01" {
				t.Fatalf("get_orders does not list order %s as OPEN: %v", id, o)
			}
			if got := c.ok("cancel_order", map[string]any{"credentialId": cred, "orderId": id, "market": "BTC"}); len(got) != 0 {
				t.Fatalf("cancel_order: %v", got)
			}
			if o := listed(); o != nil {
				t.Fatalf("get_orders still lists the cancelled order: %v", o)
			}

			// An upstream refusal is a tool error with the same envelope as /v1.
			args := map[string]any{"credentialId": cred, "orderId": id, "market": "BTC"}
			res, body := c.call("cancel_order", args)
			v1 := sameAsV1(g, g.Bootstrap().APIKey, "cancel_order", args)
			if v1.code() != "EXCHANGE_ERROR" || v1.body["reason"] != "ORDER_NOT_FOUND" {
				t.Fatalf("/v1 cancel of a cancelled order: %s", v1.raw)
			}
			wantToolError(t, res, body, contract.CodeExchangeError, v1.body["error"].(string))
			for _, f := range []string{"reason", "exchangeCode", "exchangeMessage"} {
				if body[f] != v1.body[f] {
					t.Errorf("%s: tool error has %v, /v1 %v", f, body[f], v1.body[f])
				}
			}
		})
	}
	t.Run("X-API-Key header", func(t *testing.T) {
		rec := &mcpRecorder{key: g.Bootstrap().APIKey, header: "X-API-Key"}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "perpgate-test", Version: "1"}, nil).
			Connect(context.Background(), mcpTransport(g, "streamable", rec), nil)
		if err != nil {
			t.Fatalf("initialize with X-API-Key: %v", err)
		}
		defer cs.Close()
		c := &mcpClient{t: t, cs: cs, rec: rec}
		c.ok("get_balance", map[string]any{"credentialId": cred})
	})
}

// readmeToolCalls returns the README's request examples as tool calls:
// the tool and its arguments, with the credential replaced by cred.
func readmeToolCalls(t *testing.T, cred string) []struct {
	op   *contract.Operation
	args map[string]any
} {
	t.Helper()
	var out []struct {
		op   *contract.Operation
		args map[string]any
	}
	for _, body := range readmeExamples(t) {
		op, ok := contract.Lookup(body["operation"].(string))
		if !ok {
			t.Fatalf("README example names unknown operation %v", body["operation"])
		}
		delete(body, "operation")
		body["credentialId"] = cred
		out = append(out, struct {
			op   *contract.Operation
			args map[string]any
		}{op, body})
	}
	return out
}

// TestMCPRejectsMissingFieldsBeforeRouting: every README example, less any
// one of its tool's required fields, is refused as INVALID_REQUEST naming
// the field, and none of those calls reaches a connector. A plain
// subscription on the connector subjects sees every routed request (the
// valid call at the start proves it would see a leak).
func TestMCPRejectsMissingFieldsBeforeRouting(t *testing.T) {
	g := startGateway(t, func(c *Config) {
		c.Edge.TierLimits[contract.TierBuilder] = contract.TierLimits{PerMinute: 10_000, PerDay: 100_000}
	})
	cred := g.Bootstrap().CredentialID
	nc, err := g.Connect("routing-witness")
	if err != nil {
		t.Fatal(err)
	}
	var routed atomic.Int64
	var subjects sync.Map
	sub, err := nc.Subscribe(g.cfg.Edge.SubjectPrefix+".exchange.>", func(m *nats.Msg) {
		routed.Add(1)
		subjects.Store(m.Subject, true)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	settled := func() int64 {
		t.Helper()
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		return routed.Load()
	}

	calls := readmeToolCalls(t, cred)
	for _, transport := range mcpTransportNames {
		t.Run(transport, func(t *testing.T) {
			c := mustConnectMCP(t, g, transport, g.Bootstrap().APIKey)
			before := settled()
			c.ok("get_mark_price", map[string]any{"credentialId": cred, "market": "BTC"})
			checkFor(t, time.Second, 10*time.Millisecond, func() error {
				if settled() == before {
					return errString("the witness saw no routed request")
				}
				return nil
			})

			before = settled()
			refused := 0
			for _, call := range calls {
				for _, field := range call.op.InputSchema()["required"].([]string) {
					args := map[string]any{}
					for k, v := range call.args {
						if k != field {
							args[k] = v
						}
					}
					res, body := c.call(call.op.Tool, args)
					if !res.IsError || body["code"] != string(contract.CodeInvalidRequest) ||
						!strings.Contains(body["error"].(string), `"`+field+`"`) {
						t.Errorf("%s without %s: want INVALID_REQUEST naming it, got %v", call.op.Tool, field, body)
					}
					refused++
				}
			}
			batch := map[string]any{"credentialId": cred, "orders": []any{
				map[string]any{"market": "BTC", "side": "BUY", "size": "0.01", "orderType": "LIMIT"}}}
			res, body := c.call("place_batch_order", batch)
			wantToolError(t, res, body, contract.CodeInvalidRequest, `missing required field "orders[0].price"`)
			if refused < len(contract.Operations) {
				t.Fatalf("only %d refusals checked", refused)
			}
			if n := settled() - before; n != 0 {
				var seen []string
				subjects.Range(func(k, _ any) bool { seen = append(seen, k.(string)); return true })
				t.Fatalf("%d refused calls reached a connector (subjects %v)", n, seen)
			}
		})
	}
}

// TestMCPErrors: a missing, malformed, unknown, revoked or free-tier key
// is refused at connect with the documented envelope; a scoped key, a key
// revoked mid-session and an exhausted rate limit give the documented
// error with the same code and message as POST /v1. Over each transport.
func TestMCPErrors(t *testing.T) {
	g := startGateway(t, func(c *Config) {
		c.Edge.TierLimits[contract.TierPro] = contract.TierLimits{PerMinute: 2, PerDay: 100}
	})
	cred := g.Bootstrap().CredentialID
	free := g.newKey(g.newAccount(contract.TierFree), keys.KeyRequest{Env: contract.KeyEnvTest})
	otherCred := g.newCredential(g.Bootstrap().AccountID, contract.Paper, contract.Testnet, `{}`)
	proAcct := g.newAccount(contract.TierPro)
	proCred := g.newCredential(proAcct, contract.Paper, contract.Testnet, `{}`)
	mark := map[string]any{"credentialId": cred, "market": "BTC"}

	for _, transport := range mcpTransportNames {
		t.Run(transport, func(t *testing.T) {
			revokedEarly := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest})
			if _, err := g.Keys().RevokeKey(context.Background(), keyID(t, g, revokedEarly)); err != nil {
				t.Fatal(err)
			}
			missingMsg := "no API key: send it in the X-API-Key header or as Authorization: Bearer <key>"
			if transport == "sse" {
				missingMsg = "no API key: pass it in the api_key query parameter (/mcp/sse?api_key=<key>) or the X-API-Key header"
			}
			for _, tt := range []struct {
				name, key string
				status    int
				code      contract.Code
				msg       string // empty: the same message as /v1
			}{
				{"missing key", "", 401, contract.CodeMissingAPIKey, missingMsg},
				{"malformed key", "sk_" + strings.Repeat("x", 40), 401, contract.CodeInvalidKeyFormat, ""},
				{"unknown key", "mt_test_" + strings.Repeat("x", 43), 401, contract.CodeInvalidAPIKey, ""},
				{"revoked key", revokedEarly, 401, contract.CodeKeyRevoked, ""},
				{"free key", free, 403, contract.CodeTierInsufficient, "MCP access needs the builder tier or above; this key's account is on free"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					_, rec, err := connectMCP(t, g, transport, tt.key)
					if err == nil {
						t.Fatalf("initialize with a %s succeeded", tt.name)
					}
					r := rec.lastRefusal(t)
					msg := tt.msg
					if msg == "" {
						msg, _ = sameAsV1(g, tt.key, "get_mark_price", mark).body["error"].(string)
					}
					if r.status != tt.status || r.code() != string(tt.code) || r.body["error"] != msg || r.body["success"] != false {
						t.Fatalf("want %d %s %q, got %d %s", tt.status, tt.code, msg, r.status, r.raw)
					}
					if r.header.Get("X-Request-Id") == "" {
						t.Error("refusal lacks X-Request-Id")
					}
				})
			}

			for _, tt := range []struct {
				name string
				req  keys.KeyRequest
				tool string
				args map[string]any
				code contract.Code
			}{
				{"operation scope", keys.KeyRequest{AllowedOperations: []string{contract.OpGetMarkPrice}},
					"get_balance", map[string]any{"credentialId": cred}, contract.CodeOperationNotAllowed},
				{"credential scope", keys.KeyRequest{AllowedCredentials: []string{otherCred}},
					"get_mark_price", mark, contract.CodeCredentialNotAllowed},
				{"exchange scope", keys.KeyRequest{AllowedExchanges: []contract.Exchange{contract.Binance}},
					"get_mark_price", mark, contract.CodeExchangeNotAllowed},
			} {
				t.Run(tt.name, func(t *testing.T) {
					tt.req.Env = contract.KeyEnvTest
					key := g.newKey("", tt.req)
					c := mustConnectMCP(t, g, transport, key)
					res, body := c.call(tt.tool, tt.args)
					v1 := sameAsV1(g, key, tt.tool, tt.args)
					if v1.code() != string(tt.code) || v1.status != 403 {
						t.Fatalf("/v1: %d %s", v1.status, v1.raw)
					}
					wantToolError(t, res, body, tt.code, v1.body["error"].(string))
				})
			}

			t.Run("expired key", func(t *testing.T) {
				at := time.Now().Add(300 * time.Millisecond)
				key := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, ExpiresAt: &at})
				checkFor(t, 3*time.Second, 50*time.Millisecond, func() error {
					if _, _, err := connectMCP(t, g, transport, key); err == nil {
						return errString("still accepted")
					}
					return nil
				})
				_, rec, _ := connectMCP(t, g, transport, key)
				r := rec.lastRefusal(t)
				v1 := sameAsV1(g, key, "get_mark_price", mark)
				if r.status != 401 || r.code() != "KEY_EXPIRED" || r.body["error"] != v1.body["error"] {
					t.Fatalf("want 401 KEY_EXPIRED like /v1 (%s), got %d %s", v1.raw, r.status, r.raw)
				}
			})

			t.Run("revoked mid-session", func(t *testing.T) {
				key := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest})
				c := mustConnectMCP(t, g, transport, key)
				c.ok("get_mark_price", mark)
				if _, err := g.Keys().RevokeKey(context.Background(), keyID(t, g, key)); err != nil {
					t.Fatal(err)
				}
				// The revocation event reaches the edge asynchronously, within a second.
				var v1 response
				checkFor(t, time.Second, 20*time.Millisecond, func() error {
					if v1 = sameAsV1(g, key, "get_mark_price", mark); v1.status != 401 || v1.code() != "KEY_REVOKED" {
						return errString(fmt.Sprintf("/v1 after revocation: %d %s", v1.status, v1.raw))
					}
					return nil
				})
				msg := v1.body["error"].(string)
				checkFor(t, time.Second, 20*time.Millisecond, func() error {
					if transport == "sse" {
						// The open SSE session checks the key on every call.
						res, body := c.call("get_mark_price", mark)
						if !res.IsError {
							return errString("still served after revocation")
						}
						wantToolError(t, res, body, contract.CodeKeyRevoked, msg)
						return nil
					}
					// Every streamable request passes the HTTP gate, which
					// refuses the revoked key with the /v1 envelope.
					if _, err := c.try("get_mark_price", mark); err == nil {
						return errString("still served after revocation")
					}
					r := c.rec.lastRefusal(t)
					if r.status != 401 || r.code() != "KEY_REVOKED" || r.body["error"] != msg {
						t.Fatalf("refusal: %d %s", r.status, r.raw)
					}
					return nil
				})
			})

			t.Run("rate limit", func(t *testing.T) {
				pro := g.newKey(proAcct, keys.KeyRequest{Env: contract.KeyEnvTest})
				args := map[string]any{"credentialId": proCred, "market": "BTC"}
				c := mustConnectMCP(t, g, transport, pro)
				c.ok("get_mark_price", args)
				c.ok("get_mark_price", args)
				res, body := c.call("get_mark_price", args)
				v1 := sameAsV1(g, pro, "get_mark_price", args)
				if v1.status != 429 || v1.code() != "RATE_LIMITED" {
					t.Fatalf("/v1: %d %s", v1.status, v1.raw)
				}
				seconds := regexp.MustCompile(`[0-9]+ seconds`)
				msg, _ := body["error"].(string)
				if !res.IsError || body["code"] != "RATE_LIMITED" || !seconds.MatchString(msg) ||
					seconds.ReplaceAllString(msg, "") != seconds.ReplaceAllString(v1.body["error"].(string), "") {
					t.Fatalf("want RATE_LIMITED like /v1 (%s), got %v", v1.raw, body)
				}
				if n, ok := body["retryAfter"].(float64); !ok || n < 1 || n > 60 {
					t.Fatalf("rate-limit error should carry retryAfter seconds: %v", body)
				}
			})
		})
	}
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
