package standalone

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/admin"
)

// TestUsageCounts: after a burst over /v1 and MCP, the key's usage of today
// counts every authenticated request by operation, ok or failed.
func TestUsageCounts(t *testing.T) {
	g := startGateway(t)
	k, err := g.Keys().CreateKey(context.Background(), g.Bootstrap().AccountID, keys.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		t.Fatal(err)
	}
	key := k.Key.Reveal()
	for range 5 {
		g.call(key, map[string]any{"operation": "getMarkPrice", "market": "BTC"})
	}
	for range 2 {
		g.call(key, map[string]any{"operation": "getMarkPrice", "market": "NOPE-USD-PERP"})
	}
	g.call(key, map[string]any{"operation": "getMarkPrise", "market": "BTC"})
	g.call(key, map[string]any{"operation": "getBalance"})
	g.call("mt_test_"+strings.Repeat("x", 43), map[string]any{"operation": "getBalance"}) // not authenticated: not counted
	c := mustConnectMCP(t, g, "streamable", key)
	c.ok("get_mark_price", map[string]any{"credentialId": g.Bootstrap().CredentialID, "market": "ETH"})

	adm := admin.NewClient(g.AdminURL(), g.Bootstrap().AdminToken)
	want := map[string]contract.OperationCounts{
		"getMarkPrice": {OK: 6, Failed: 2}, "getBalance": {OK: 1}, contract.UsageInvalidOperation: {Failed: 1},
	}
	var last admin.UsageResponse
	checkFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		last, err = adm.KeyUsage(context.Background(), k.Info.ID, 3)
		if err != nil {
			return err
		}
		if len(last.Days) != 3 {
			return fmt.Errorf("%d days, want 3", len(last.Days))
		}
		today := last.Days[2]
		if today.Date != time.Now().UTC().Format(time.DateOnly) {
			return fmt.Errorf("last day %s is not today", today.Date)
		}
		if fmt.Sprint(today.ByOperation) != fmt.Sprint(want) {
			return fmt.Errorf("today = %v, want %v", today.ByOperation, want)
		}
		return nil
	})
	if len(last.Days[0].ByOperation) != 0 {
		t.Fatalf("two days ago = %v, want nothing", last.Days[0])
	}
	for _, bad := range []int{0, 93} {
		if _, err := adm.KeyUsage(context.Background(), k.Info.ID, bad); err == nil || !strings.Contains(err.Error(), "days must be 1 to 92") {
			t.Fatalf("days=%d: %v", bad, err)
		}
	}
	if _, err := adm.KeyUsage(context.Background(), "4b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11", 1); err == nil || !strings.Contains(err.Error(), "API_KEY_NOT_FOUND") {
		t.Fatalf("unknown key: %v", err)
	}
}

// TestAuditTrail: trading calls, allowed and refused, over /v1 and MCP, are
// in the account's audit trail with their outcome and order ids; reads are
// not; pages follow the cursor; no full key appears.
func TestAuditTrail(t *testing.T) {
	g := startGateway(t)
	acct := g.Bootstrap().AccountID
	key := g.Bootstrap().APIKey
	readOnly := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvTest, Guards: contract.Guards{ReadOnly: true}})
	start := time.Now().UTC().Add(-time.Second)

	placed := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000", "clientOrderId": "audit-1"})
	g.ok(map[string]any{"operation": "getOrders"})
	g.call(key, map[string]any{"operation": "cancelOrder", "orderId": "999999999", "market": "BTC"})
	g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000", "dryRun": true})
	if r := g.call(readOnly, map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": 2}); r.code() != string(contract.CodeKeyReadOnly) {
		t.Fatalf("read-only setLeverage: %s", r.raw)
	}
	c := mustConnectMCP(t, g, "streamable", key)
	c.ok("cancel_all_orders", map[string]any{"credentialId": g.Bootstrap().CredentialID, "market": "BTC"})

	adm := admin.NewClient(g.AdminURL(), g.Bootstrap().AdminToken)
	type row struct{ op, code, via string }
	want := []row{
		{"placeLimitOrder", "OK", "v1"}, {"cancelOrder", "EXCHANGE_ERROR", "v1"}, {"placeLimitOrder", "OK", "v1"},
		{"setLeverage", "KEY_READ_ONLY", "v1"}, {"cancelAllOrders", "OK", "mcp"},
	}
	var entries []contract.AuditEntry
	checkFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		page, err := adm.Audit(context.Background(), acct, url.Values{"since": {start.Format(time.RFC3339)}})
		if err != nil {
			return err
		}
		entries = page.Entries
		var got []row
		for _, e := range entries {
			got = append(got, row{e.Operation, e.Code, e.Via})
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("audit = %v, want %v", got, want)
		}
		return nil
	})
	first := entries[0]
	if !slices.Equal(first.OrderIDs, []string{placed["orderId"].(string)}) || first.CredentialID != g.Bootstrap().CredentialID ||
		first.Exchange != contract.Paper || first.KeyDisplay != key[:12] || first.RequestID == "" || first.DurationMs <= 0 ||
		!strings.Contains(string(first.Params), `"clientOrderId":"audit-1"`) {
		t.Fatalf("first entry = %+v", first)
	}
	if !strings.Contains(string(entries[2].Params), `"dryRun":true`) || entries[3].Message == "" {
		t.Fatalf("dry run / refusal entries = %+v / %+v", entries[2], entries[3])
	}

	// Pages of two, following nextCursor, give the same five entries.
	var paged []string
	q := url.Values{"since": {start.Format(time.RFC3339)}, "limit": {"2"}}
	for range 5 {
		page, err := adm.Audit(context.Background(), acct, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			paged = append(paged, e.RequestID)
		}
		if page.NextCursor == nil {
			break
		}
		q.Set("cursor", *page.NextCursor)
	}
	if len(paged) != 5 || paged[0] != entries[0].RequestID || paged[4] != entries[4].RequestID {
		t.Fatalf("paged ids %v", paged)
	}

	raw := g.do(mustRequest(t, http.MethodGet, g.AdminURL()+"/admin/v1/accounts/"+acct+"/audit", g.Bootstrap().AdminToken))
	if raw.status != http.StatusOK || strings.Contains(string(raw.raw), key) || strings.Contains(string(raw.raw), readOnly) {
		t.Fatalf("audit listing %d leaks a full key or failed: %s", raw.status, raw.raw)
	}
	bad := g.do(mustRequest(t, http.MethodGet, g.AdminURL()+"/admin/v1/accounts/"+acct+"/audit?cursor=zzz", g.Bootstrap().AdminToken))
	if bad.status != http.StatusBadRequest || !strings.Contains(string(bad.raw), "cursor") {
		t.Fatalf("bad cursor: %d %s", bad.status, bad.raw)
	}
}

func mustRequest(t *testing.T, method, u, token string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// TestMCPChallenge: a refused MCP connection carries the RFC 6750
// challenge, so OAuth-aware MCP clients show the gateway's message.
func TestMCPChallenge(t *testing.T) {
	g := startGateway(t)
	for _, tc := range []struct {
		key, want string
	}{
		{"", `Bearer realm="perpgate", error_description="no API key`},
		{"mt_test_" + strings.Repeat("x", 43), `Bearer realm="perpgate", error="invalid_token", error_description="API key not recognized"`},
	} {
		req, _ := http.NewRequest(http.MethodPost, g.URL()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.key != "" {
			req.Header.Set("Authorization", "Bearer "+tc.key)
		}
		r := g.do(req)
		if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), tc.want) {
			t.Errorf("key %q: %d WWW-Authenticate %q, want it to start %q", tc.key, r.status, r.header.Get("WWW-Authenticate"), tc.want)
		}
	}
}

// TestOpenAPIRouteMethods: the document is served on GET, and another
// method gets the 405 envelope the document promises.
func TestOpenAPIRouteMethods(t *testing.T) {
	g := startGateway(t)
	req, _ := http.NewRequest(http.MethodPost, g.URL()+"/openapi.json", strings.NewReader("{}"))
	r := g.do(req)
	if r.status != http.StatusMethodNotAllowed || r.code() != string(contract.CodeMethodNotAllowed) {
		t.Fatalf("POST /openapi.json: %d %s", r.status, r.raw)
	}
}

// TestCLIAuditNewestFirst: `perpgate audit --limit N` shows the newest N
// entries, `--oldest` the oldest N.
func TestCLIAuditNewestFirst(t *testing.T) {
	g := startGateway(t)
	acct := g.Bootstrap().AccountID
	for _, lev := range []int{2, 3} {
		g.ok(map[string]any{"operation": "setLeverage", "market": "BTC", "leverage": lev})
		time.Sleep(10 * time.Millisecond) // distinct times
	}
	g.ok(map[string]any{"operation": "cancelAllOrders", "market": "BTC"})
	env := map[string]string{"PERPGATE_ADMIN_URL": g.AdminURL(), "PERPGATE_ADMIN_TOKEN": g.Bootstrap().AdminToken}
	audit := func(extra ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		args := append([]string{"audit", "--account", acct, "--limit", "1"}, extra...)
		code := Main(context.Background(), args, strings.NewReader(""), &out, &errOut,
			func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "v-test")
		var page struct{ Entries []struct{ Operation string } }
		if err := json.Unmarshal(out.Bytes(), &page); code != 0 || err != nil || len(page.Entries) > 1 {
			t.Fatalf("audit %v: exit %d, %s %s", extra, code, out.String(), errOut.String())
		}
		if len(page.Entries) == 0 {
			return "" // not written yet
		}
		return page.Entries[0].Operation
	}
	checkFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		if got := audit(); got != "cancelAllOrders" {
			return fmt.Errorf("newest entry %q, want cancelAllOrders", got)
		}
		return nil
	})
	if got := audit("--oldest"); got != "setLeverage" {
		t.Errorf("--oldest gave %q, want setLeverage", got)
	}
}

// TestAuditWrittenBeforeTheAnswer: serve's edge writes a trading call's
// audit entries straight into the file key store, so the outcome is there
// when the call answers, with no stream between (issue 30).
func TestAuditWrittenBeforeTheAnswer(t *testing.T) {
	g := startGateway(t)
	adm := admin.NewClient(g.AdminURL(), g.Bootstrap().AdminToken)
	start := time.Now().UTC().Add(-time.Second)
	for i := range 3 {
		placed := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
			"price": "50000", "clientOrderId": fmt.Sprintf("audit-now-%d", i)})
		page, err := adm.Audit(context.Background(), g.Bootstrap().AccountID, url.Values{"since": {start.Format(time.RFC3339)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) != i+1 {
			t.Fatalf("after placement %d the audit holds %d entries; want %d", i+1, len(page.Entries), i+1)
		}
		e := page.Entries[i]
		if e.Code != "OK" || !slices.Equal(e.OrderIDs, []string{placed["orderId"].(string)}) {
			t.Fatalf("entry of placement %d = %+v; want its final entry naming order %v", i+1, e, placed["orderId"])
		}
	}
	nc, err := g.Connect("audit-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(context.Background(), contract.NewSubjects(g.cfg.Edge.SubjectPrefix).AuditStream())
	if err != nil {
		t.Fatal(err)
	}
	if info, err := stream.Info(context.Background()); err != nil || info.State.LastSeq != 0 {
		t.Fatalf("the audit stream took %v entries (err %v); want none: serve's edge writes to the key store", info.State.LastSeq, err)
	}
}
