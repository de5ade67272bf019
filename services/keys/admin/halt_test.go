package admin_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/admin"
)

// TestHaltScopeAndAudit: POST /admin/v1/keys/{id}/halt makes the key
// read-only and answers one entry per credential the key may use (its
// allowedCredentials, else its account's credentials of its environment,
// narrowed by allowedExchanges). Without NATS every credential reports the
// bus down in its own error, and the key is read-only regardless. The halt
// is in the account's audit trail.
func TestHaltScopeAndAudit(t *testing.T) {
	srv, svc, _ := newServer(t)
	ctx := context.Background()
	acct, err := svc.CreateAccount(ctx, contract.TierPro, "desk")
	if err != nil {
		t.Fatal(err)
	}
	cred := func(x contract.Exchange, env contract.Environment, secret string) string {
		t.Helper()
		c, err := svc.CreateCredential(ctx, acct.ID, keys.CredentialRequest{Exchange: x, Env: env, Secret: json.RawMessage(secret)})
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	binance := `{"apiKey":"made-up-key","apiSecret":"made-up-secret"}`
	paperA, paperB := cred(contract.Paper, contract.Testnet, `{}`), cred(contract.Paper, contract.Testnet, `{}`)
	binTest, binMain := cred(contract.Binance, contract.Testnet, binance), cred(contract.Binance, contract.Mainnet, binance)
	deleted := cred(contract.Paper, contract.Testnet, `{}`)
	if err := svc.DeleteCredential(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	newKey := func(req keys.KeyRequest) string {
		t.Helper()
		k, err := svc.CreateKey(ctx, acct.ID, req)
		if err != nil {
			t.Fatal(err)
		}
		return k.Info.ID
	}
	cli := map[string]string{"PERPGATE_ADMIN_URL": srv.URL, "PERPGATE_ADMIN_TOKEN": testToken}

	for _, tt := range []struct {
		name  string
		req   keys.KeyRequest
		body  string
		creds []string
	}{
		{"test key, every credential of its environment", keys.KeyRequest{Env: contract.KeyEnvTest}, "", []string{paperA, paperB, binTest}},
		{"live key", keys.KeyRequest{Env: contract.KeyEnvLive}, `{}`, []string{binMain}},
		{"allowedExchanges", keys.KeyRequest{Env: contract.KeyEnvTest, AllowedExchanges: []contract.Exchange{contract.Paper}}, `{"cancelOrders":false}`, []string{paperA, paperB}},
		{"allowedCredentials", keys.KeyRequest{Env: contract.KeyEnvTest, AllowedCredentials: []string{paperB, binTest}}, "", []string{paperB, binTest}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := newKey(tt.req)
			status, _, out := do(t, srv.URL, call{method: "POST", path: "/admin/v1/keys/" + id + "/halt", body: tt.body})
			if status != 200 || out["success"] != true || out["id"] != id || out["readOnly"] != true {
				t.Fatalf("halt: %d %v", status, out)
			}
			var got []string
			for _, c := range out["credentials"].([]any) {
				c := c.(map[string]any)
				if c["cancelledOrders"] != 0.0 || c["closedPositions"] != 0.0 || c["error"] != nil {
					t.Fatalf("halt without flags did something on %v", c)
				}
				got = append(got, c["credentialId"].(string))
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.creds))
			if !slices.Equal(got, want) {
				t.Fatalf("credentials %v, want %v", got, want)
			}
			_, _, list := do(t, srv.URL, call{method: "GET", path: "/admin/v1/accounts/" + acct.ID + "/keys"})
			for _, k := range list["keys"].([]any) {
				if k := k.(map[string]any); k["id"] == id && k["readOnly"] != true {
					t.Fatalf("listing after the halt: %v", k)
				}
			}
		})
	}

	// With the flags and no NATS, every credential fails on its own.
	id := newKey(keys.KeyRequest{Env: contract.KeyEnvTest, AllowedExchanges: []contract.Exchange{contract.Paper}})
	r := runCLI(t, cli, "", "key", "halt", id, "--cancel-orders", "--close-positions")
	if r.code != admin.ExitOK {
		t.Fatalf("key halt: exit %d %s", r.code, r.stderr)
	}
	res := object(t, r.stdout)
	creds := res["credentials"].([]any)
	if res["readOnly"] != true || len(creds) != 2 {
		t.Fatalf("halt with flags: %v", res)
	}
	for _, c := range creds {
		e, _ := c.(map[string]any)["error"].(map[string]any)
		if e == nil || e["code"] != string(contract.CodeServiceUnavailable) {
			t.Fatalf("credential without a bus: %v, want its error SERVICE_UNAVAILABLE", c)
		}
	}
	_, _, audit := do(t, srv.URL, call{method: "GET", path: "/admin/v1/accounts/" + acct.ID + "/audit?limit=1000"})
	var keyEntries, credEntries int
	for _, e := range audit["entries"].([]any) {
		e := e.(map[string]any)
		if e["keyId"] != id || e["operation"] != keys.OpHalt || e["via"] != "admin" {
			continue
		}
		switch e["credentialId"] {
		case nil:
			keyEntries++
		case paperA, paperB:
			if e["code"] != string(contract.CodeServiceUnavailable) {
				t.Fatalf("credential audit entry %v", e)
			}
			credEntries++
		}
	}
	if keyEntries != 1 || credEntries != 2 {
		t.Fatalf("audit holds %d key and %d credential entries of the halt, want 1 and 2: %v", keyEntries, credEntries, audit)
	}

	// Undo: PATCH readOnly:false.
	status, _, out := do(t, srv.URL, call{method: "PATCH", path: "/admin/v1/keys/" + id, body: `{"readOnly":false}`})
	if status != 200 || out["readOnly"] != false {
		t.Fatalf("undo: %d %v", status, out)
	}

	for _, tt := range []struct {
		path, body string
		status     int
		code       contract.Code
	}{
		{"/admin/v1/keys/4b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11/halt", "", 404, contract.CodeAPIKeyNotFound},
		{"/admin/v1/keys/" + id + "/halt", `{"cancelOrders":"yes"}`, 400, contract.CodeInvalidRequest},
		{"/admin/v1/keys/" + id + "/halt", `{"closeAll":true}`, 400, contract.CodeInvalidRequest},
		{"/admin/v1/keys/" + id + "/halt", `[]`, 400, contract.CodeInvalidJSON},
	} {
		status, _, out := do(t, srv.URL, call{method: "POST", path: tt.path, body: tt.body})
		if status != tt.status || out["code"] != string(tt.code) {
			t.Errorf("POST %s %s: %d %v, want %d %s", tt.path, tt.body, status, out, tt.status, tt.code)
		}
	}
	if r := runCLI(t, cli, "", "key", "halt", "--help"); r.code != admin.ExitOK || !contains(r.stdout, "-close-positions") {
		t.Fatalf("key halt --help: %d %q", r.code, r.stdout)
	}
	if r := runCLI(t, cli, "", "key", "halt"); r.code != admin.ExitUsage || !contains(r.stderr, "missing key id") {
		t.Fatalf("key halt without id: %d %q", r.code, r.stderr)
	}
}
