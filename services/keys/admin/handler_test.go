package admin_test

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/apikey"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

type call struct {
	method, path, body string
	token              *string // nil: testToken
}

func do(t *testing.T, base string, c call) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	tok := testToken
	if c.token != nil {
		tok = *c.token
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object", c.method, c.path, data)
	}
	return resp.StatusCode, resp.Header, out
}

func ptr(s string) *string { return &s }

func TestAdminRoutes(t *testing.T) {
	srv, svc, logs := newServer(t)
	ctx := context.Background()

	// Create through the API and check every success shape.
	status, _, acct := do(t, srv.URL, call{method: "POST", path: "/admin/v1/accounts", body: `{"tier":"builder","name":"Acme"}`})
	if status != 201 || acct["success"] != true || acct["tier"] != "builder" || acct["name"] != "Acme" || acct["createdAt"] == nil {
		t.Fatalf("create account: %d %v", status, acct)
	}
	acctID, _ := acct["id"].(string)
	if _, err := uuid.Parse(acctID); err != nil {
		t.Fatalf("account id %q", acctID)
	}

	secret := `{"apiKey":"AKverysecret","apiSecret":"SKverysecret"}`
	status, _, cred := do(t, srv.URL, call{method: "POST", path: "/admin/v1/accounts/" + acctID + "/credentials",
		body: `{"exchange":"binance","env":"testnet","label":"main","secret":` + secret + `}`})
	if status != 201 || cred["success"] != true || cred["exchange"] != "binance" || cred["env"] != "testnet" || cred["label"] != "main" || cred["accountId"] != acctID {
		t.Fatalf("create credential: %d %v", status, cred)
	}
	credID, _ := cred["credentialId"].(string)
	if _, ok := cred["secret"]; ok {
		t.Fatal("credential response carries the secret")
	}

	status, _, key := do(t, srv.URL, call{method: "POST", path: "/admin/v1/accounts/" + acctID + "/keys",
		body: `{"env":"test","allowedOperations":["getBalance"],"allowedExchanges":["binance"],"allowedCredentials":["` + credID + `"],"expiresAt":"2999-01-01T00:00:00Z"}`})
	fullKey, _ := key["key"].(string)
	if status != 201 || key["success"] != true || !apikey.WellFormed(fullKey) || key["display"] != fullKey[:12] ||
		key["env"] != "test" || key["accountId"] != acctID || key["expiresAt"] != "2999-01-01T00:00:00Z" || key["revokedAt"] != nil {
		t.Fatalf("create key: %d %v", status, key)
	}
	if _, ok := key["hash"]; ok {
		t.Fatal("key response carries the hash")
	}
	keyID, _ := key["id"].(string)

	status, _, list := do(t, srv.URL, call{method: "GET", path: "/admin/v1/accounts/" + acctID + "/keys"})
	keysList, _ := list["keys"].([]any)
	if status != 200 || list["success"] != true || len(keysList) != 1 {
		t.Fatalf("list keys: %d %v", status, list)
	}
	listed := keysList[0].(map[string]any)
	if listed["id"] != keyID || listed["display"] != fullKey[:12] || listed["key"] != nil {
		t.Fatalf("listed key = %v", listed)
	}
	if raw, _ := json.Marshal(list); strings.Contains(string(raw), fullKey[12:]) {
		t.Fatal("key listing holds the full key")
	}

	status, _, creds := do(t, srv.URL, call{method: "GET", path: "/admin/v1/accounts/" + acctID + "/credentials"})
	credList, _ := creds["credentials"].([]any)
	if status != 200 || creds["success"] != true || len(credList) != 1 || credList[0].(map[string]any)["credentialId"] != credID {
		t.Fatalf("list credentials: %d %v", status, creds)
	}

	status, _, revoked := do(t, srv.URL, call{method: "POST", path: "/admin/v1/keys/" + keyID + "/revoke"})
	if status != 200 || revoked["success"] != true || revoked["id"] != keyID || revoked["revokedAt"] == nil {
		t.Fatalf("revoke: %d %v", status, revoked)
	}
	if k, err := svc.LookupKey(ctx, apikey.Hash(fullKey)); err != nil || k.RevokedAt == nil {
		t.Fatalf("key after revoke = %+v, %v", k, err)
	}

	status, _, del := do(t, srv.URL, call{method: "DELETE", path: "/admin/v1/credentials/" + credID})
	if status != 200 || del["success"] != true || del["credentialId"] != credID || del["deleted"] != true {
		t.Fatalf("delete credential: %d %v", status, del)
	}
	if _, err := svc.LookupCredential(ctx, credID); err == nil {
		t.Fatal("credential still found after delete")
	}
	for _, s := range []string{"AKverysecret", "SKverysecret", fullKey} {
		if strings.Contains(logs.String(), s) {
			t.Fatalf("logs contain %q", s)
		}
	}
}

func TestAdminErrors(t *testing.T) {
	srv, svc, _ := newServer(t)
	ctx := context.Background()
	free, err := svc.CreateAccount(ctx, contract.TierFree, "")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := svc.CreateKey(ctx, free.ID, keys.KeyRequest{Env: contract.KeyEnvLive}); err != nil {
			t.Fatal(err)
		}
	}
	unknown := uuid.NewString()
	acctKeys := "/admin/v1/accounts/" + free.ID + "/keys"
	acctCreds := "/admin/v1/accounts/" + free.ID + "/credentials"

	tests := []struct {
		name   string
		call   call
		status int
		code   contract.Code
		msg    string
	}{
		{name: "no token", call: call{method: "GET", path: acctKeys, token: ptr("")}, status: 401, code: contract.CodeAdminUnauthorized, msg: "admin token"},
		{name: "wrong token", call: call{method: "GET", path: acctKeys, token: ptr("wrong-token")}, status: 401, code: contract.CodeAdminUnauthorized},
		{name: "token prefix", call: call{method: "GET", path: acctKeys, token: ptr(testToken[:10])}, status: 401, code: contract.CodeAdminUnauthorized},
		{name: "unknown route unauthenticated", call: call{method: "GET", path: "/nope", token: ptr("")}, status: 401, code: contract.CodeAdminUnauthorized},
		{name: "unknown route", call: call{method: "GET", path: "/admin/v1/nope"}, status: 404, code: contract.CodeNotFound, msg: "/admin/v1/nope"},
		{name: "wrong method", call: call{method: "PUT", path: acctKeys}, status: 405, code: contract.CodeMethodNotAllowed, msg: "PUT"},
		{name: "delete accounts", call: call{method: "DELETE", path: "/admin/v1/accounts"}, status: 405, code: contract.CodeMethodNotAllowed},
		{name: "invalid json", call: call{method: "POST", path: "/admin/v1/accounts", body: `{"tier":`}, status: 400, code: contract.CodeInvalidJSON},
		{name: "empty body", call: call{method: "POST", path: "/admin/v1/accounts"}, status: 400, code: contract.CodeInvalidJSON},
		{name: "array body", call: call{method: "POST", path: "/admin/v1/accounts", body: `[1]`}, status: 400, code: contract.CodeInvalidJSON},
		{name: "trailing data", call: call{method: "POST", path: "/admin/v1/accounts", body: `{"tier":"free"} x`}, status: 400, code: contract.CodeInvalidJSON},
		{name: "too large", call: call{method: "POST", path: "/admin/v1/accounts", body: `{"name":"` + strings.Repeat("a", 70<<10) + `"}`}, status: 413, code: contract.CodePayloadTooLarge},
		{name: "unknown field", call: call{method: "POST", path: "/admin/v1/accounts", body: `{"tier":"free","plan":"x"}`}, status: 400, code: contract.CodeInvalidRequest, msg: `unknown field "plan"`},
		{name: "wrong type", call: call{method: "POST", path: "/admin/v1/accounts", body: `{"tier":5}`}, status: 400, code: contract.CodeInvalidRequest, msg: "field tier must be a string"},
		{name: "bad tier", call: call{method: "POST", path: "/admin/v1/accounts", body: `{"tier":"gold"}`}, status: 400, code: contract.CodeInvalidRequest, msg: `"gold"`},
		{name: "key for unknown account", call: call{method: "POST", path: "/admin/v1/accounts/" + unknown + "/keys", body: `{"env":"live"}`}, status: 404, code: contract.CodeAccountNotFound},
		{name: "key limit", call: call{method: "POST", path: acctKeys, body: `{"env":"live"}`}, status: 409, code: contract.CodeKeyLimitReached},
		{name: "key bad env", call: call{method: "POST", path: acctKeys, body: `{"env":"prod"}`}, status: 400, code: contract.CodeInvalidRequest, msg: `"prod"`},
		{name: "key bad expiry", call: call{method: "POST", path: acctKeys, body: `{"env":"live","expiresAt":"tomorrow"}`}, status: 400, code: contract.CodeInvalidRequest, msg: "RFC 3339"},
		{name: "key past expiry", call: call{method: "POST", path: acctKeys, body: `{"env":"live","expiresAt":"2000-01-01T00:00:00Z"}`}, status: 400, code: contract.CodeInvalidRequest, msg: "not in the future"},
		{name: "key bad operations type", call: call{method: "POST", path: acctKeys, body: `{"env":"live","allowedOperations":"getBalance"}`}, status: 400, code: contract.CodeInvalidRequest, msg: "field allowedOperations must be an array"},
		{name: "list keys unknown account", call: call{method: "GET", path: "/admin/v1/accounts/" + unknown + "/keys"}, status: 404, code: contract.CodeAccountNotFound},
		{name: "revoke unknown key", call: call{method: "POST", path: "/admin/v1/keys/" + unknown + "/revoke"}, status: 404, code: contract.CodeAPIKeyNotFound},
		{name: "credential bad secret", call: call{method: "POST", path: acctCreds, body: `{"exchange":"okx","env":"mainnet","secret":{"apiKey":"AKhidden1","apiSecret":"SKhidden2"}}`}, status: 400, code: contract.CodeInvalidRequest, msg: `"passphrase" is required for okx`},
		{name: "credential paper mainnet", call: call{method: "POST", path: acctCreds, body: `{"exchange":"paper","env":"mainnet","secret":{}}`}, status: 400, code: contract.CodeInvalidRequest, msg: "testnet"},
		{name: "credential unknown field", call: call{method: "POST", path: acctCreds, body: `{"exchange":"paper","env":"testnet","apiKey":"AKhidden1"}`}, status: 400, code: contract.CodeInvalidRequest, msg: `unknown field "apiKey"`},
		{name: "credential unknown account", call: call{method: "POST", path: "/admin/v1/accounts/" + unknown + "/credentials", body: `{"exchange":"paper","env":"testnet"}`}, status: 404, code: contract.CodeAccountNotFound},
		{name: "list credentials unknown account", call: call{method: "GET", path: "/admin/v1/accounts/nope/credentials"}, status: 404, code: contract.CodeAccountNotFound},
		{name: "delete unknown credential", call: call{method: "DELETE", path: "/admin/v1/credentials/" + unknown}, status: 404, code: contract.CodeCredentialNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, hdr, body := do(t, srv.URL, tt.call)
			if status != tt.status || body["success"] != false || body["code"] != string(tt.code) {
				t.Fatalf("got %d %v; want %d %s", status, body, tt.status, tt.code)
			}
			msg, _ := body["error"].(string)
			if msg == "" || !strings.Contains(msg, tt.msg) {
				t.Fatalf("error %q does not contain %q", msg, tt.msg)
			}
			for _, s := range []string{"AKhidden1", "SKhidden2"} {
				if strings.Contains(msg, s) {
					t.Fatalf("error %q echoes a secret", msg)
				}
			}
			if tt.code == contract.CodeMethodNotAllowed && hdr.Get("Allow") == "" {
				t.Fatal("405 without Allow header")
			}
			if tt.code == contract.CodeAdminUnauthorized && !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Fatal("401 without WWW-Authenticate: Bearer")
			}
		})
	}
}

// TestTokenComparedInConstantTime checks that the token check goes through
// crypto/subtle, not ==, so its timing says nothing about the token.
func TestTokenComparedInConstantTime(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "auth.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var subtleCall, tokenEquality bool
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "subtle" && sel.Sel.Name == "ConstantTimeCompare" {
					subtleCall = true
				}
			}
		case *ast.BinaryExpr:
			for _, side := range []ast.Expr{n.X, n.Y} {
				if id, ok := side.(*ast.Ident); ok && (id.Name == "token" || id.Name == "got") && (n.Op == token.EQL || n.Op == token.NEQ) {
					if lit, ok := n.Y.(*ast.BasicLit); !ok || lit.Value != `""` {
						tokenEquality = true
					}
				}
			}
		}
		return true
	})
	if !subtleCall {
		t.Fatal("auth.go does not call subtle.ConstantTimeCompare")
	}
	if tokenEquality {
		t.Fatal("auth.go compares the token with == or !=")
	}
}
