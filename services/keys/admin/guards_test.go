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
	key := ok("key", "create", "--account", acct, "--env", "test", "--readOnly", "true",
		"--allowedMarkets", "ethusdt,BTC", "--maxOrderNotional", "250.50", "--maxLeverage", "5")
	want := func(where string, got map[string]any, fields map[string]any) {
		t.Helper()
		for k, v := range fields {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Fatalf("%s: %s = %v, want %v (%v)", where, k, got[k], v, got)
			}
		}
	}
	want("create", key, map[string]any{"readOnly": true, "allowedMarkets": []any{"BTC", "ETH-USDT-PERP"},
		"maxOrderNotional": "250.5", "maxDailyNotional": nil, "maxLeverage": 5})

	id := key["id"].(string)
	changed := ok("key", "guards", id, "--readOnly", "false", "--maxDailyNotional", "10000", "--maxOrderNotional", "none")
	want("patch", changed, map[string]any{"readOnly": false, "allowedMarkets": []any{"BTC", "ETH-USDT-PERP"},
		"maxOrderNotional": nil, "maxDailyNotional": "10000", "maxLeverage": 5})
	listed := ok("key", "list", "--account", acct)["keys"].([]any)[0].(map[string]any)
	want("list", listed, map[string]any{"maxDailyNotional": "10000", "maxLeverage": 5})

	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"key", "guards", id}, admin.ExitUsage, "give at least one"},
		{[]string{"key", "guards", id, "--maxLeverage", "0"}, admin.ExitError, "maxLeverage must be 1 to 200"},
		{[]string{"key", "guards", id, "--maxOrderNotional", "-5"}, admin.ExitError, "maxOrderNotional must be a positive decimal"},
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
	want("after refusals", after, map[string]any{"readOnly": false, "maxDailyNotional": "10000", "maxLeverage": 5})
}
func contains(s, sub string) bool { return strings.Contains(s, sub) }
