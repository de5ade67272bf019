package edge

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/apikey"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/ratelimit"
)

// snake is the tool name SPEC §4 derives from an operation name.
func snake(camel string) string {
	var b strings.Builder
	for _, r := range camel {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// resolveSchema compiles a generated schema with the JSON Schema library
// the go-sdk itself uses.
func resolveSchema(t *testing.T, name string, schema any) *jsonschema.Resolved {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatalf("%s: schema does not marshal: %v", name, err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: schema does not parse: %v", name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: schema does not resolve: %v", name, err)
	}
	return rs
}

// TestToolsFromOperationTable checks each tool against SPEC §4 and issue 3:
// snake_case name, a one-paragraph description that says what the tool
// does, its risk and its units, annotations marking read-only versus
// destructive, and schemas a JSON Schema validator accepts.
func TestToolsFromOperationTable(t *testing.T) {
	// The tools that change something on the exchange, and whether
	// repeating a call with the same arguments changes anything more.
	changing := map[string]bool{
		"place_limit_order": false, "place_market_order": false, "place_stop_order": false,
		"place_batch_order": false, "place_protection_orders": false,
		"cancel_order": true, "cancel_all_orders": true, "close_all_positions": true, "set_leverage": true,
		"modify_order": true, "set_dead_man_switch": true,
	}
	if n := len(contract.SpecOperations()); n != 20 {
		t.Fatalf("the operation table has %d of SPEC's operations, want 20", n)
	}
	seen := map[string]bool{}
	for _, op := range contract.Operations {
		tool := toolOf(op)
		t.Run(tool.Name, func(t *testing.T) {
			name := snake(op.Name)
			if op.Name == contract.OpGetCredentials {
				name = "list_credentials" // DESIGN §13
			}
			if tool.Name != name || seen[tool.Name] {
				t.Errorf("tool of %s is named %q, want unique %q", op.Name, tool.Name, name)
			}
			seen[tool.Name] = true

			d := tool.Description
			if strings.Contains(d, "\n") || len(d) < 120 || len(d) > 700 {
				t.Errorf("description is not one paragraph of 120-700 characters (%d): %q", len(d), d)
			}
			idempotent, changes := changing[tool.Name]
			want := []string{op.Name, "credentialId"}
			if changes {
				want = append(want, "mainnet", "real money")
			} else {
				want = append(want, "Read-only")
			}
			fields := paramNames(contract.SpecOf(op.Params))
			if fields["size"] {
				want = append(want, "base-asset units")
			}
			if fields["price"] || fields["triggerPrice"] || fields["entryPrice"] {
				want = append(want, "quote currency")
			}
			if fields["tpPercent"] {
				want = append(want, "percent", "5 means 5%")
			}
			if fields["leverage"] {
				want = append(want, "multiplier")
			}
			if _, ok := op.Result.FieldByName("MakerFee"); ok {
				want = append(want, "basis points")
			}
			for _, w := range want {
				if !strings.Contains(d, w) {
					t.Errorf("description lacks %q: %s", w, d)
				}
			}

			a := tool.Annotations
			switch {
			case a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil:
				t.Fatalf("annotations incomplete: %+v", a)
			case a.ReadOnlyHint == changes || *a.DestructiveHint != changes:
				t.Errorf("readOnlyHint=%v destructiveHint=%v, want %v/%v", a.ReadOnlyHint, *a.DestructiveHint, !changes, changes)
			case changes && a.IdempotentHint != idempotent:
				t.Errorf("idempotentHint=%v, want %v", a.IdempotentHint, idempotent)
			case !changes && !a.IdempotentHint:
				t.Error("a read-only tool is idempotent")
			}
			if op.ReadOnly == changes {
				t.Errorf("operation table marks %s read-only=%v", op.Name, op.ReadOnly)
			}

			in := tool.InputSchema.(map[string]any)
			if in["type"] != "object" || in["additionalProperties"] != false {
				t.Errorf("input schema is not a closed object: %v", in)
			}
			required := in["required"].([]string)
			if free := op.ByExchange || op.Keyless; free != (len(required) == 0 || required[0] != "credentialId") {
				t.Errorf("credentialId required %v, want %v (it may name an exchange instead, or take none): %v", !free, !free, required)
			}
			for _, f := range contract.SpecOf(op.Params).Fields {
				if f.Required && !contains(required, f.Name) {
					t.Errorf("required field %s missing from %v", f.Name, required)
				}
			}
			resolveSchema(t, tool.Name+" input", tool.InputSchema)
			resolveSchema(t, tool.Name+" output", tool.OutputSchema)
		})
	}
}

func paramNames(s *contract.StructSpec) map[string]bool {
	out := map[string]bool{}
	for _, f := range s.Fields {
		out[f.Name] = true
		if f.Elem != nil {
			for n := range paramNames(f.Elem) {
				out[n] = true
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestToolSchemasAgreeWithDecoder: what a tool's JSON Schema accepts, the
// edge's decoder accepts, and what one refuses the other refuses, at the
// bounds SPEC §8 and DESIGN §4 set.
func TestToolSchemasAgreeWithDecoder(t *testing.T) {
	const cred = "0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11"
	order := func(mutate ...func(map[string]any)) map[string]any {
		o := map[string]any{"market": "BTC", "side": "BUY", "size": "0.01", "price": "50000"}
		for _, m := range mutate {
			m(o)
		}
		return o
	}
	orders := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = order()
		}
		return out
	}
	limit := func(k string, v any) map[string]any {
		args := map[string]any{"market": "ETH", "side": "SELL", "size": "0.5", "price": "4000"}
		if v == nil {
			delete(args, k)
		} else {
			args[k] = v
		}
		return args
	}
	for _, tt := range []struct {
		name, tool string
		args       map[string]any
		ok         bool
	}{
		{"candles limit at max", "get_candles", map[string]any{"market": "BTC", "limit": 500}, true},
		{"candles limit over max", "get_candles", map[string]any{"market": "BTC", "limit": 501}, false},
		{"candles limit zero", "get_candles", map[string]any{"market": "BTC", "limit": 0}, false},
		{"candles interval in enum", "get_candles", map[string]any{"market": "BTC", "interval": "240"}, true},
		{"candles interval outside enum", "get_candles", map[string]any{"market": "BTC", "interval": "2"}, false},
		{"candles interval as number", "get_candles", map[string]any{"market": "BTC", "interval": 15}, false},
		{"orderbook depth over max", "get_orderbook", map[string]any{"market": "BTC", "depth": 1001}, false},
		{"orderbook without market", "get_orderbook", map[string]any{"depth": 5}, false},
		{"batch of 10", "place_batch_order", map[string]any{"orders": orders(10)}, true},
		{"batch of 11", "place_batch_order", map[string]any{"orders": orders(11)}, false},
		{"empty batch", "place_batch_order", map[string]any{"orders": []any{}}, false},
		{"batch order type outside enum", "place_batch_order", map[string]any{"orders": []any{order(func(o map[string]any) { o["orderType"] = "MARKET" })}}, false},
		{"batch order without price", "place_batch_order", map[string]any{"orders": []any{order(func(o map[string]any) { delete(o, "price") })}}, false},
		{"batch order with unknown field", "place_batch_order", map[string]any{"orders": []any{order(func(o map[string]any) { o["tif"] = "GTC" })}}, false},
		{"limit order", "place_limit_order", limit("postOnly", true), true},
		{"limit size zero", "place_limit_order", limit("size", "0"), false},
		{"limit size zero with decimals", "place_limit_order", limit("size", "0.000"), false},
		{"limit size negative", "place_limit_order", limit("size", "-1"), false},
		{"limit size with exponent", "place_limit_order", limit("size", "1e3"), false},
		{"limit size as JSON number", "place_limit_order", limit("size", 0.5), false},
		{"limit size below one", "place_limit_order", limit("size", "0.001"), true},
		{"limit side lowercase", "place_limit_order", limit("side", "buy"), false},
		{"limit without price", "place_limit_order", limit("price", nil), false},
		{"limit with unknown field", "place_limit_order", limit("leverage", 5), false},
		{"limit clientOrderId too long", "place_limit_order", limit("clientOrderId", strings.Repeat("a", 37)), false},
		{"limit postOnly as string", "place_limit_order", limit("postOnly", "true"), false},
		{"protection percent as number", "place_protection_orders", map[string]any{"market": "BTC", "side": "LONG", "size": "0.01", "entryPrice": "60000", "tpPercent": 5, "slPercent": 2.5}, true},
		{"protection percent as string", "place_protection_orders", map[string]any{"market": "BTC", "side": "SHORT", "size": "0.01", "entryPrice": "60000", "slPercent": "2.5"}, false},
		{"protection percent zero", "place_protection_orders", map[string]any{"market": "BTC", "side": "LONG", "size": "0.01", "entryPrice": "60000", "tpPercent": 0, "slPercent": 2}, false},
		{"protection side outside enum", "place_protection_orders", map[string]any{"market": "BTC", "side": "BUY", "size": "0.01", "entryPrice": "60000", "tpPercent": 5}, false},
		{"leverage in range", "set_leverage", map[string]any{"market": "BTC", "leverage": 20}, true},
		{"leverage zero", "set_leverage", map[string]any{"market": "BTC", "leverage": 0}, false},
		{"leverage over max", "set_leverage", map[string]any{"market": "BTC", "leverage": 201}, false},
		{"leverage as string", "set_leverage", map[string]any{"market": "BTC", "leverage": "5"}, false},
		{"cancel without orderId", "cancel_order", map[string]any{"market": "BTC"}, false},
		{"balance with a parameter", "get_balance", map[string]any{"market": "BTC"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			op, ok := contract.LookupTool(tt.tool)
			if !ok {
				t.Fatalf("no tool %s", tt.tool)
			}
			schema := resolveSchema(t, tt.tool, toolOf(op).InputSchema)
			args := map[string]any{"credentialId": cred}
			fields := map[string]json.RawMessage{}
			for k, v := range tt.args {
				args[k] = v
				fields[k], _ = json.Marshal(v)
			}
			// Validate a JSON round trip of the arguments, as they arrive.
			var wire any
			b, _ := json.Marshal(args)
			_ = json.Unmarshal(b, &wire)
			schemaErr := schema.Validate(wire)
			_, decodeErr := op.DecodeParams(fields)
			if (schemaErr == nil) != tt.ok {
				t.Errorf("schema: ok=%v, want %v (%v)", schemaErr == nil, tt.ok, schemaErr)
			}
			// The schema refuses a percentage sent as a decimal string; the
			// decoder takes it, as /v1 clients send it.
			lenient := tt.name == "protection percent as string"
			if (decodeErr == nil) != (tt.ok || lenient) {
				t.Errorf("decoder: ok=%v, want %v (%v)", decodeErr == nil, tt.ok || lenient, decodeErr)
			}
			if decodeErr != nil && (decodeErr.Code != contract.CodeInvalidRequest || decodeErr.Message == "") {
				t.Errorf("decoder refused with %s %q, want INVALID_REQUEST naming the field", decodeErr.Code, decodeErr.Message)
			}
		})
	}
	t.Run("credentialId not a UUID", func(t *testing.T) {
		op, _ := contract.LookupTool("get_balance")
		if resolveSchema(t, op.Tool, toolOf(op).InputSchema).Validate(map[string]any{"credentialId": "paper-1"}) == nil {
			t.Error("schema accepts a credentialId that is not a UUID")
		}
	})
}

// mcpHarness is an edge on an embedded NATS server with a stand-in keys
// service and a stand-in connector that counts what reaches it.
type mcpHarness struct {
	srv    *Server
	cred   string
	keys   map[string]contract.KeyInfo // by raw key
	raw    map[contract.Tier]string    // raw key of each tier
	routed atomic.Int64
	// credLookups counts the credential look-ups that reached keys.
	credLookups atomic.Int64
}

func newMCPHarness(t *testing.T, mutate ...func(*Config)) *mcpHarness {
	t.Helper()
	emb, err := bus.StartEmbedded(bus.EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	connect := func(name string) *nats.Conn {
		nc, err := emb.Connect(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	h := &mcpHarness{cred: "0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11",
		keys: map[string]contract.KeyInfo{}, raw: map[contract.Tier]string{}}
	for _, tier := range []contract.Tier{contract.TierFree, contract.TierBuilder, contract.TierPro} {
		k, err := apikey.Generate(apikey.EnvTest)
		if err != nil {
			t.Fatal(err)
		}
		h.raw[tier] = k.Reveal()
		h.keys[k.Reveal()] = contract.KeyInfo{ID: "key-" + string(tier), AccountID: "acct", Hash: k.Hash(),
			Display: k.Display(), Env: contract.KeyEnvTest, Tier: tier, CreatedAt: time.Now()}
	}
	cfg := DefaultConfig()
	cfg.SubjectPrefix = "mcptest"
	for _, m := range mutate {
		m(&cfg)
	}
	subjects := contract.NewSubjects(cfg.SubjectPrefix)
	fake := connect("fake")
	answer := func(subject string, reply func(*nats.Msg) any) {
		if _, err := fake.Subscribe(subject, func(m *nats.Msg) {
			b, _ := json.Marshal(reply(m))
			_ = m.Respond(b)
		}); err != nil {
			t.Fatal(err)
		}
	}
	answer(subjects.KeyLookup(), func(m *nats.Msg) any {
		var req contract.KeyLookupRequest
		_ = json.Unmarshal(m.Data, &req)
		for _, k := range h.keys {
			if k.Hash == req.Hash {
				return k
			}
		}
		return nil
	})
	answer(subjects.CredentialLookup(), func(*nats.Msg) any {
		h.credLookups.Add(1)
		return contract.CredentialInfo{ID: h.cred, AccountID: "acct", Exchange: contract.Paper, Environment: contract.Testnet}
	})
	answer(subjects.Prefix+".exchange.>", func(*nats.Msg) any {
		h.routed.Add(1)
		return contract.MarkPriceResult{}
	})
	if err := fake.Flush(); err != nil {
		t.Fatal(err)
	}
	srv, err := New(cfg, Deps{NATS: connect("edge"), Limiter: ratelimit.NewMemory(nil),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	return h
}

// session connects the go-sdk client to a server whose every tool call
// carries key, past the HTTP gate: it exercises the tool-level check alone.
func (h *mcpHarness) session(t *testing.T, key string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := h.srv.newMCPServer(func(*mcp.RequestExtra) string { return key }).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolErrorOf(t *testing.T, res *mcp.CallToolResult) *contract.Error {
	t.Helper()
	if !res.IsError || len(res.Content) != 1 || res.StructuredContent != nil {
		t.Fatalf("want a tool error with one text block and no structured content, got %+v", res)
	}
	var env struct {
		Success *bool `json:"success"`
		contract.Error
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil || env.Success == nil || *env.Success {
		t.Fatalf("text block is not the error envelope: %v", res.Content[0])
	}
	return &env.Error
}

// TestMCPFreeKeyRefusedForEveryTool: MCP needs the builder tier (SPEC §5),
// so a free key is refused on every tool, read-only ones included, both at
// the HTTP gate and by the tool call itself, and nothing reaches a
// connector. A builder key on the same harness is routed, which shows the
// connector counter would see a leak.
func TestMCPFreeKeyRefusedForEveryTool(t *testing.T) {
	h := newMCPHarness(t)
	free := h.raw[contract.TierFree]
	wantMsg := "MCP access needs the builder tier or above; this key's account is on free"

	t.Run("tool call", func(t *testing.T) {
		cs := h.session(t, free)
		for _, op := range contract.Operations {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: op.Tool,
				Arguments: map[string]any{"credentialId": h.cred, "market": "BTC"}})
			if err != nil {
				t.Fatalf("%s: %v", op.Tool, err)
			}
			if ce := toolErrorOf(t, res); ce.Code != contract.CodeTierInsufficient || ce.Message != wantMsg {
				t.Errorf("%s: got %s %q, want TIER_INSUFFICIENT %q", op.Tool, ce.Code, ce.Message, wantMsg)
			}
		}
	})

	t.Run("HTTP gate", func(t *testing.T) {
		ts := httptest.NewServer(h.srv.Handler())
		defer ts.Close()
		for _, op := range contract.Operations {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + op.Tool +
				`","arguments":{"credentialId":"` + h.cred + `","market":"BTC"}}}`
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+free)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var env map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&env)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || env["code"] != "TIER_INSUFFICIENT" || env["error"] != wantMsg {
				t.Errorf("%s: got %d %v", op.Tool, resp.StatusCode, env)
			}
		}
		resp, err := http.Get(ts.URL + "/mcp/sse?api_key=" + free)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("SSE with a free key: status %d", resp.StatusCode)
		}
	})

	if n := h.routed.Load(); n != 0 {
		t.Fatalf("%d free-key calls reached the connector", n)
	}
	cs := h.session(t, h.raw[contract.TierBuilder])
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_mark_price",
		Arguments: map[string]any{"credentialId": h.cred, "market": "BTC"}})
	if err != nil || res.IsError {
		t.Fatalf("builder call: %v %+v", err, res)
	}
	if n := h.routed.Load(); n != 1 {
		t.Fatalf("builder call: %d messages reached the connector, want 1", n)
	}
}

// TestToolResultShapes: a success is structured content plus the same
// JSON as a text block; a gateway error is a tool error whose text block
// is the /v1 envelope with the same code and message.
func TestToolResultShapes(t *testing.T) {
	h := newMCPHarness(t)
	cs := h.session(t, h.raw[contract.TierBuilder])
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_mark_price",
		Arguments: map[string]any{"credentialId": h.cred, "market": "BTC"}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("get_mark_price: %v %+v", err, res)
	}
	var text, structured any
	_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &text)
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &structured)
	if text == nil || !reflect.DeepEqual(text, structured) {
		t.Fatalf("text %v and structured content %v differ", text, structured)
	}
	op, _ := contract.LookupTool("get_mark_price")
	if err := resolveSchema(t, "get_mark_price output", toolOf(op).OutputSchema).Validate(structured); err != nil {
		t.Fatalf("structured content fails the output schema: %v", err)
	}

	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_mark_price",
		Arguments: map[string]any{"credentialId": h.cred}})
	if err != nil {
		t.Fatal(err)
	}
	ce := toolErrorOf(t, res)
	if ce.Code != contract.CodeInvalidRequest || ce.Message != `missing required field "market"` {
		t.Fatalf("got %s %q", ce.Code, ce.Message)
	}
	if n := h.routed.Load(); n != 1 {
		t.Fatalf("%d messages reached the connector, want 1 (the invalid call must not be routed)", n)
	}
}

// TestOutputSchemaOfRejectedBatchOrder: a batch result with a rejected
// order carries that order's error without the envelope's success field,
// and still matches the tool's output schema.
func TestOutputSchemaOfRejectedBatchOrder(t *testing.T) {
	op, _ := contract.LookupTool("place_batch_order")
	result := contract.BatchResult{Results: []contract.BatchOrderResult{
		{OrderID: "1", Status: contract.StatusOpen, ClientOrderID: "a"},
		{Status: contract.StatusRejected, ClientOrderID: "b",
			Error: contract.Upstream(contract.ReasonInsufficientMargin, "-2019", "Margin is insufficient.", "not enough margin")},
	}}
	b, _ := json.Marshal(result)
	var wire any
	_ = json.Unmarshal(b, &wire)
	if err := resolveSchema(t, op.Tool, toolOf(op).OutputSchema).Validate(wire); err != nil {
		t.Fatalf("%s fails the output schema: %v", b, err)
	}
}
