package admin_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/services/keys/admin"
)

// TestCLIGuards sets guards at creation, changes them with `key guards`
// (PATCH /admin/v1/keys/{id}): absent flags stay, none removes a limit.
func TestCLIGuards(t *testing.T) {
	srv, _, _ := newServer(t)
	env := map[string]string{"PERPGATE_ADMIN_URL": srv.URL, "PERPGATE_ADMIN_TOKEN": testToken}
	ok := func(args ...string) map[string]any {
		t.Helper()
		r := runCLI(t, env, "", args...)
		if r.code != admin.ExitOK {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		return object(t, r.stdout)
	}
	acct := ok("account", "create", "--tier", "pro")["id"].(string)
	// DESIGN §13's kebab-case flags and §12's camelCase ones, mixed.
	key := ok("key", "create", "--account", acct, "--env", "test", "--read-only", "true",
		"--allowedMarkets", "ethusdt,BTC", "--max-order-notional", "250.50", "--maxLeverage", "5",
		"--max-position-notional", "4000")
	want := func(where string, got map[string]any, fields map[string]any) {
		t.Helper()
		for k, v := range fields {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Fatalf("%s: %s = %v, want %v (%v)", where, k, got[k], v, got)
			}
		}
	}
	want("create", key, map[string]any{"readOnly": true, "allowedMarkets": []any{"BTC", "ETH-USDT-PERP"},
		"maxOrderNotional": "250.5", "maxDailyNotional": nil, "maxLeverage": 5, "maxPositionNotional": "4000"})

	id := key["id"].(string)
	changed := ok("key", "guards", id, "--readOnly", "false", "--max-daily-notional", "10000", "--maxOrderNotional", "none",
		"--maxPositionNotional", "6000.25")
	want("patch", changed, map[string]any{"readOnly": false, "allowedMarkets": []any{"BTC", "ETH-USDT-PERP"},
		"maxOrderNotional": nil, "maxDailyNotional": "10000", "maxLeverage": 5, "maxPositionNotional": "6000.25"})
	listed := ok("key", "list", "--account", acct)["keys"].([]any)[0].(map[string]any)
	want("list", listed, map[string]any{"maxDailyNotional": "10000", "maxLeverage": 5, "maxPositionNotional": "6000.25"})
	want("kebab", ok("key", "guards", id, "--max-leverage", "7", "--allowed-markets", "SOL"),
		map[string]any{"maxLeverage": 7, "allowedMarkets": []any{"SOL"}, "maxPositionNotional": "6000.25"})

	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"key", "guards", id}, admin.ExitUsage, "give at least one"},
		{[]string{"key", "guards", id, "--maxLeverage", "0"}, admin.ExitError, "maxLeverage must be 1 to 200"},
		{[]string{"key", "guards", id, "--maxOrderNotional", "-5"}, admin.ExitError, `maxOrderNotional\" must be greater than zero`},
		{[]string{"key", "guards", id, "--max-order-notional", "1e10000"}, admin.ExitError, "no exponent"},
		{[]string{"key", "guards", id, "--max-position-notional", "2000000000000"}, admin.ExitError, "maxPositionNotional must be a positive decimal string of at most 40 characters, up to 1000000000000"},
		{[]string{"key", "guards", id, "--max-leverage", "3", "--maxLeverage", "4"}, admin.ExitUsage, "give --max-leverage once"},
		{[]string{"key", "guards", id, "--read-only", "yes"}, admin.ExitUsage, "--read-only must be true or false"},
		{[]string{"key", "guards", id, "--allowedMarkets", "BTC USDT"}, admin.ExitError, "allowedMarkets"},
		{[]string{"key", "guards", id, "--readOnly", "yes"}, admin.ExitUsage, "--readOnly must be true or false"},
		{[]string{"key", "guards", "4b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11", "--readOnly", "true"}, admin.ExitError, "API_KEY_NOT_FOUND"},
	} {
		r := runCLI(t, env, "", tt.args...)
		if r.code != tt.code || !contains(r.stderr, tt.msg) {
			t.Errorf("%v: exit %d stderr %q, want exit %d naming %q", tt.args, r.code, r.stderr, tt.code, tt.msg)
		}
	}
	after := ok("key", "list", "--account", acct)["keys"].([]any)[0].(map[string]any)
	want("after refusals", after, map[string]any{"readOnly": false, "maxDailyNotional": "10000", "maxLeverage": 7, "maxPositionNotional": "6000.25"})

	help := runCLI(t, env, "", "key", "guards", "--help")
	if help.code != admin.ExitOK || !contains(help.stdout, "-max-position-notional") || !contains(help.stdout, "-read-only") || contains(help.stdout, "  -maxOrderNotional") {
		t.Fatalf("key guards --help: exit %d, want the kebab-case flags only:\n%s", help.code, help.stdout)
	}
}

// TestAdminGuardCaps: the admin API reads notional caps in the /v1 decimal
// grammar with an upper bound, at creation and in PATCH, naming the field;
// maxPositionNotional is set, listed, changed and removed like the others.
func TestAdminGuardCaps(t *testing.T) {
	srv, _, _ := newServer(t)
	_, _, acct := do(t, srv.URL, call{method: "POST", path: "/admin/v1/accounts", body: `{"tier":"pro"}`})
	keysPath := "/admin/v1/accounts/" + acct["id"].(string) + "/keys"
	for _, body := range []string{
		`{"env":"test","maxOrderNotional":"1e10000"}`,
		`{"env":"test","maxDailyNotional":"1E+5"}`,
		`{"env":"test","maxPositionNotional":"1000000000001"}`,
		`{"env":"test","maxPositionNotional":"0"}`,
		`{"env":"test","maxPositionNotional":5000}`,
	} {
		status, _, out := do(t, srv.URL, call{method: "POST", path: keysPath, body: body})
		if status != 400 || out["code"] != "INVALID_REQUEST" || !strings.Contains(out["error"].(string), firstField(body)) {
			t.Errorf("create %s: %d %v, want 400 INVALID_REQUEST naming %s", body, status, out, firstField(body))
		}
	}
	status, _, key := do(t, srv.URL, call{method: "POST", path: keysPath, body: `{"env":"test","maxPositionNotional":"12500.75"}`})
	if status != 201 || key["maxPositionNotional"] != "12500.75" {
		t.Fatalf("create with maxPositionNotional: %d %v", status, key)
	}
	keyPath := "/admin/v1/keys/" + key["id"].(string)
	status, _, out := do(t, srv.URL, call{method: "PATCH", path: keyPath, body: `{"maxOrderNotional":"1e10000"}`})
	if status != 400 || out["code"] != "INVALID_REQUEST" || !strings.Contains(out["error"].(string), "maxOrderNotional") {
		t.Fatalf("PATCH 1e10000: %d %v", status, out)
	}
	status, _, out = do(t, srv.URL, call{method: "PATCH", path: keyPath, body: `{"maxPositionNotional":"1000000000000","maxOrderNotional":"0.5"}`})
	if status != 200 || out["maxPositionNotional"] != "1000000000000" || out["maxOrderNotional"] != "0.5" {
		t.Fatalf("PATCH at the bound: %d %v", status, out)
	}
	status, _, out = do(t, srv.URL, call{method: "PATCH", path: keyPath, body: `{"maxPositionNotional":null}`})
	if status != 200 || out["maxPositionNotional"] != nil || out["maxOrderNotional"] != "0.5" {
		t.Fatalf("PATCH null: %d %v", status, out)
	}
	_, _, list := do(t, srv.URL, call{method: "GET", path: keysPath})
	listed := list["keys"].([]any)[0].(map[string]any)
	if v, ok := listed["maxPositionNotional"]; !ok || v != nil {
		t.Fatalf("listing shows maxPositionNotional %v (present %v), want null", v, ok)
	}
}

// firstField is the guard a one-guard test body sets.
func firstField(body string) string {
	i := strings.Index(body, `"max`)
	return body[i+1 : i+strings.Index(body[i+1:], `"`)+1]
}
func contains(s, sub string) bool { return strings.Contains(s, sub) }
