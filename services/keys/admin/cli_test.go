package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/apikey"
	"github.com/perpgate/perpgate/services/keys/admin"
)

type cliResult struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := admin.RunCLI(context.Background(), args, strings.NewReader(stdin), &out, &errOut,
		func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// object decodes s as exactly one JSON object.
func object(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		t.Fatalf("%q is not a JSON object: %v", s, err)
	}
	if dec.More() {
		t.Fatalf("%q holds more than one JSON value", s)
	}
	return m
}

func TestCLI(t *testing.T) {
	srv, _, _ := newServer(t)
	env := map[string]string{"PERPGATE_ADMIN_URL": srv.URL, "PERPGATE_ADMIN_TOKEN": testToken}
	ok := func(t *testing.T, stdin string, args ...string) map[string]any {
		t.Helper()
		r := runCLI(t, env, stdin, args...)
		if r.code != admin.ExitOK || r.stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		m := object(t, r.stdout)
		if m["success"] != true {
			t.Fatalf("%v: %v", args, m)
		}
		return m
	}

	acct := ok(t, "", "account", "create", "--tier", "builder", "--name", "Acme")
	if list := ok(t, "", "account", "list"); !strings.Contains(fmt.Sprint(list["accounts"]), acct["id"].(string)) {
		t.Fatalf("account list: %v does not hold %v", list, acct["id"])
	}
	acctID := acct["id"].(string)
	if acct["tier"] != "builder" || acct["name"] != "Acme" {
		t.Fatalf("account = %v", acct)
	}
	secretFile := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(secretFile, []byte(`{"apiKey":"AKclisecret","apiSecret":"SKclisecret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cred := ok(t, "", "credential", "create", "--account", acctID, "--exchange", "bybit", "--env", "testnet", "--label", "bot", "--secret-file", secretFile)
	credID := cred["credentialId"].(string)
	paper := ok(t, `{"startingBalance":"1000"}`, "credential", "create", "--account", acctID, "--exchange", "paper", "--env", "testnet", "--secret-file", "-")
	if paper["exchange"] != "paper" {
		t.Fatalf("paper credential = %v", paper)
	}
	key := ok(t, "", "key", "create", "--account", acctID, "--env", "test", "--operations", "getBalance,getOrders",
		"--exchanges", "bybit", "--credentials", credID, "--expires-at", "2999-01-01T00:00:00Z")
	full, _ := key["key"].(string)
	if !apikey.WellFormed(full) || key["display"] != full[:12] || len(key["allowedOperations"].([]any)) != 2 {
		t.Fatalf("key = %v", key)
	}
	list := ok(t, "", "key", "list", "--account", acctID)
	if ks := list["keys"].([]any); len(ks) != 1 || ks[0].(map[string]any)["id"] != key["id"] {
		t.Fatalf("key list = %v", list)
	}
	creds := ok(t, "", "credential", "list", "--account", acctID)
	if cs := creds["credentials"].([]any); len(cs) != 2 {
		t.Fatalf("credential list = %v", creds)
	}
	rev := ok(t, "", "key", "revoke", key["id"].(string))
	if rev["revokedAt"] == nil {
		t.Fatalf("revoke = %v", rev)
	}
	del := ok(t, "", "credential", "delete", credID)
	if del["deleted"] != true {
		t.Fatalf("delete = %v", del)
	}

	unknown := uuid.NewString()
	apiErrors := []struct {
		name string
		env  map[string]string
		args []string
		code string
	}{
		{name: "wrong token", env: map[string]string{"PERPGATE_ADMIN_URL": srv.URL, "PERPGATE_ADMIN_TOKEN": "nope"}, args: []string{"key", "list", "--account", acctID}, code: "ADMIN_UNAUTHORIZED"},
		{name: "bad tier", args: []string{"account", "create", "--tier", "gold"}, code: "INVALID_REQUEST"},
		{name: "key unknown account", args: []string{"key", "create", "--account", unknown, "--env", "live"}, code: "ACCOUNT_NOT_FOUND"},
		{name: "key bad operation", args: []string{"key", "create", "--account", acctID, "--env", "live", "--operations", "withdraw"}, code: "INVALID_REQUEST"},
		{name: "key list unknown account", args: []string{"key", "list", "--account", unknown}, code: "ACCOUNT_NOT_FOUND"},
		{name: "revoke unknown", args: []string{"key", "revoke", unknown}, code: "API_KEY_NOT_FOUND"},
		{name: "credential bad shape", args: []string{"credential", "create", "--account", acctID, "--exchange", "okx", "--env", "mainnet", "--secret-file", secretFile}, code: "INVALID_REQUEST"},
		{name: "credential list unknown account", args: []string{"credential", "list", "--account", unknown}, code: "ACCOUNT_NOT_FOUND"},
		{name: "delete twice", args: []string{"credential", "delete", credID}, code: "CREDENTIAL_NOT_FOUND"},
	}
	for _, tt := range apiErrors {
		t.Run(tt.name, func(t *testing.T) {
			e := env
			if tt.env != nil {
				e = tt.env
			}
			r := runCLI(t, e, "", tt.args...)
			if r.code != admin.ExitError || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
			}
			m := object(t, r.stderr)
			if m["success"] != false || m["code"] != tt.code || m["error"] == "" {
				t.Fatalf("stderr = %v, want code %s", m, tt.code)
			}
			if strings.Contains(r.stderr, "clisecret") {
				t.Fatal("error echoes the secret")
			}
		})
	}

	notJSON := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(notJSON, []byte(`apiKey=AKclisecret`), 0o600); err != nil {
		t.Fatal(err)
	}
	usage := []struct {
		name  string
		env   map[string]string
		stdin string
		args  []string
		msg   string
	}{
		{name: "no command", args: nil, msg: "expected a command"},
		{name: "unknown command", args: []string{"key", "rotate"}, msg: `unknown command "key rotate"`},
		{name: "no token", env: map[string]string{"PERPGATE_ADMIN_URL": srv.URL}, args: []string{"key", "list", "--account", acctID}, msg: "PERPGATE_ADMIN_TOKEN is not set"},
		{name: "missing tier", args: []string{"account", "create"}, msg: "--tier is required"},
		{name: "unknown flag", args: []string{"account", "create", "--tier", "free", "--plan", "x"}, msg: "flag provided but not defined: -plan"},
		{name: "missing env", args: []string{"key", "create", "--account", acctID}, msg: "--env is required"},
		{name: "bad expiry", args: []string{"key", "create", "--account", acctID, "--env", "live", "--expires-at", "tomorrow"}, msg: "--expires-at must be an RFC 3339 time"},
		{name: "list missing account", args: []string{"key", "list"}, msg: "--account is required"},
		{name: "revoke without id", args: []string{"key", "revoke"}, msg: "missing key ID"},
		{name: "revoke two ids", args: []string{"key", "revoke", "a", "b"}, msg: `unexpected argument "b"`},
		{name: "credential without secret file", args: []string{"credential", "create", "--account", acctID, "--exchange", "paper", "--env", "testnet"}, msg: "--secret-file is required"},
		{name: "secret file missing", args: []string{"credential", "create", "--account", acctID, "--exchange", "paper", "--env", "testnet", "--secret-file", filepath.Join(t.TempDir(), "none")}, msg: "--secret-file"},
		{name: "secret not json", args: []string{"credential", "create", "--account", acctID, "--exchange", "paper", "--env", "testnet", "--secret-file", notJSON}, msg: "must hold one JSON object"},
		{name: "secret stdin not object", stdin: `["AKclisecret"]`, args: []string{"credential", "create", "--account", acctID, "--exchange", "paper", "--env", "testnet", "--secret-file", "-"}, msg: "must hold one JSON object"},
		{name: "credential list missing account", args: []string{"credential", "list"}, msg: "--account is required"},
		{name: "delete without id", args: []string{"credential", "delete"}, msg: "missing credential ID"},
	}
	for _, tt := range usage {
		t.Run(tt.name, func(t *testing.T) {
			e := env
			if tt.env != nil {
				e = tt.env
			}
			r := runCLI(t, e, tt.stdin, tt.args...)
			if r.code != admin.ExitUsage || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q; want %d", r.code, r.stdout, admin.ExitUsage)
			}
			if !strings.Contains(r.stderr, tt.msg) || !strings.Contains(r.stderr, "usage:") {
				t.Fatalf("stderr %q does not contain %q and the usage", r.stderr, tt.msg)
			}
			if strings.Contains(r.stderr, "clisecret") {
				t.Fatal("usage error echoes the secret")
			}
		})
	}

	t.Run("help", func(t *testing.T) {
		r := runCLI(t, env, "", "--help")
		if r.code != admin.ExitOK || !strings.Contains(r.stdout, "perpgate key create") {
			t.Fatalf("help: exit %d, %q", r.code, r.stdout)
		}
	})
	// Help needs no token and sends nothing: the admin URL is unreachable.
	noToken := map[string]string{"PERPGATE_ADMIN_URL": "http://127.0.0.1:1"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"key", "--help"}, "perpgate key revoke ID"},
		{[]string{"account", "-h"}, "perpgate account create"},
		{[]string{"key", "create", "--help"}, "-expires-at"},
		{[]string{"key", "create", "-h"}, "-operations"},
		{[]string{"credential", "create", "--account", "x", "--help"}, "-secret-file"},
		{[]string{"key", "revoke", "abc", "--help"}, "perpgate key revoke ID"},
		{[]string{"credential", "list", "help"}, "-account"},
	} {
		t.Run("help "+strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCLI(t, noToken, "", tt.args...)
			if r.code != admin.ExitOK || r.stderr != "" || !strings.Contains(r.stdout, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
	t.Run("group without subcommand", func(t *testing.T) {
		r := runCLI(t, noToken, "", "credential")
		if r.code != admin.ExitUsage || !strings.Contains(r.stderr, "needs a subcommand") || !strings.Contains(r.stderr, "perpgate credential delete ID") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		r := runCLI(t, map[string]string{"PERPGATE_ADMIN_URL": "http://127.0.0.1:1", "PERPGATE_ADMIN_TOKEN": testToken}, "", "key", "list", "--account", acctID)
		if r.code != admin.ExitError || !strings.Contains(r.stderr, "127.0.0.1:1") {
			t.Fatalf("unreachable: exit %d, %q", r.code, r.stderr)
		}
	})
	t.Run("default url", func(t *testing.T) {
		if admin.DefaultURL != "http://127.0.0.1:8081" {
			t.Fatalf("DefaultURL = %s", admin.DefaultURL)
		}
	})
}
