package standalone

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFirstRun is `make run` on an empty data dir: it prints a key, a
// credential and a curl line that works as printed, and writes
// bootstrap.json (0600); a second start reuses them.
func TestFirstRun(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, func(c *Config) { c.DataDir = dir })
	banner := g.logs.String()
	boot := g.Bootstrap()
	for _, want := range []string{boot.APIKey, boot.CredentialID, "curl -s " + g.URL() + "/v1"} {
		if !strings.Contains(banner, want) {
			t.Fatalf("banner lacks %q", want)
		}
	}

	// Run the printed curl line's request exactly as printed.
	m := regexp.MustCompile(`curl -s (\S+) -H 'X-API-Key: (\S+)' -H 'Content-Type: application/json' \\\s+-d '([^']+)'`).FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no curl line in the banner:\n%s", banner)
	}
	req, _ := http.NewRequest(http.MethodPost, m[1], strings.NewReader(m[3]))
	req.Header.Set("X-API-Key", m[2])
	req.Header.Set("Content-Type", "application/json")
	r := g.do(req)
	if r.status != 200 || r.body["success"] != true || checkKind(r.body["markPrice"], decStr) != nil {
		t.Fatalf("the printed curl line answers %d %s", r.status, r.raw)
	}

	path := filepath.Join(dir, "bootstrap.json")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("bootstrap.json mode %v, want 0600", info.Mode().Perm())
	}
	var onDisk map[string]string
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &onDisk); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"accountId": boot.AccountID, "apiKey": boot.APIKey, "credentialId": boot.CredentialID, "adminToken": boot.AdminToken} {
		if onDisk[k] != want || want == "" {
			t.Errorf("bootstrap.json %s = %q, want %q", k, onDisk[k], want)
		}
	}
	for _, name := range []string{"master.key", "keys.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s missing or not 0600: %v", name, err)
		}
	}

	// A restart on the same data dir keeps the account, key and token.
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	again := startGateway(t, func(c *Config) { c.DataDir = dir })
	if again.Bootstrap() != boot {
		t.Fatalf("restart changed the bootstrap: %+v vs %+v", again.Bootstrap(), boot)
	}
	again.ok(map[string]any{"operation": "getBalance"})

	// Later starts point to bootstrap.json instead of printing the key
	// into every log the output is kept in.
	banner = again.logs.String()
	if strings.Contains(banner, boot.APIKey) {
		t.Fatal("a restart printed the bootstrap key in full")
	}
	if !strings.Contains(banner, "API key:     in "+path+" (printed at the first start only)") {
		t.Fatalf("the restart banner does not say where the key is:\n%s", banner)
	}
	curl := regexp.MustCompile(`(?s)curl -s .*?\}'`).FindString(banner)
	if curl == "" {
		t.Fatalf("no curl line in the restart banner:\n%s", banner)
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the printed curl line cannot run", tool)
		}
	}
	out, err := exec.Command("bash", "-c", curl).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"success":true`) {
		t.Fatalf("the restart banner's curl line: %v %s", err, out)
	}
}

// TestCLI drives the admin subcommands of the perpgate binary against a
// running gateway, as an operator would.
func TestCLI(t *testing.T) {
	g := startGateway(t)
	env := map[string]string{"PERPGATE_ADMIN_URL": g.AdminURL(), "PERPGATE_ADMIN_TOKEN": g.Bootstrap().AdminToken}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	run := func(stdin string, args ...string) (map[string]any, int, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), args, strings.NewReader(stdin), &out, &errOut, lookup, "test")
		var obj map[string]any
		_ = json.Unmarshal(out.Bytes(), &obj)
		return obj, code, errOut.String()
	}
	acct, code, stderr := run("", "account", "create", "--tier", "pro", "--name", "desk")
	if code != 0 || acct["id"] == nil {
		t.Fatalf("account create: %d %s", code, stderr)
	}
	id := acct["id"].(string)
	cred, code, stderr := run(`{"apiKey":"made-up-binance-key","apiSecret":"made-up-binance-secret"}`,
		"credential", "create", "--account", id, "--exchange", "binance", "--env", "mainnet", "--label", "main", "--secret-file", "-")
	if code != 0 || cred["credentialId"] == nil {
		t.Fatalf("credential create: %d %s", code, stderr)
	}
	key, code, stderr := run("", "key", "create", "--account", id, "--env", "live", "--exchanges", "binance")
	if code != 0 || !strings.HasPrefix(key["key"].(string), "mt_live_") {
		t.Fatalf("key create: %d %s", code, stderr)
	}
	list, code, _ := run("", "key", "list", "--account", id)
	if code != 0 || len(list["keys"].([]any)) != 1 || strings.Contains(mustJSONString(list), key["key"].(string)) {
		t.Fatalf("key list: %v", list)
	}
	if _, code, stderr = run("", "key", "revoke", key["id"].(string)); code != 0 {
		t.Fatalf("key revoke: %s", stderr)
	}
	if _, code, stderr = run("", "credential", "delete", cred["credentialId"].(string)); code != 0 {
		t.Fatalf("credential delete: %s", stderr)
	}
	if _, code, stderr = run("", "account", "create", "--tier", "gold"); code != 1 || !strings.Contains(stderr, "INVALID_REQUEST") {
		t.Fatalf("bad tier: exit %d %s", code, stderr)
	}
	if _, code, _ = run("", "frobnicate"); code != 2 {
		t.Fatalf("unknown command: exit %d, want 2", code)
	}
	env["PERPGATE_ADMIN_TOKEN"] = "wrong-token-0123456789"
	if _, code, stderr = run("", "key", "list", "--account", id); code != 1 || !strings.Contains(stderr, "ADMIN_UNAUTHORIZED") {
		t.Fatalf("wrong token: exit %d %s", code, stderr)
	}
}

func mustJSONString(v any) string { b, _ := json.Marshal(v); return string(b) }
