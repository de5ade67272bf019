package standalone

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// TestReferenceExamplesRun sends every docs/api.md example, in the order
// the reference gives them, to a live gateway on a fresh paper account:
// each must succeed as printed.
func TestReferenceExamplesRun(t *testing.T) {
	g := startGateway(t)
	cred := g.Bootstrap().CredentialID
	var orderID string
	for i, e := range contract.Examples {
		body := strings.ReplaceAll(e.Body(cred), "$ORDER_ID", orderID)
		r := g.post(g.Bootstrap().APIKey, []byte(body))
		if r.status != 200 || r.body["success"] != true {
			t.Fatalf("example %d (%s) %s: %d %s", i, e.Operation, body, r.status, r.raw)
		}
		if e.Operation == contract.OpPlaceLimitOrder && orderID == "" {
			orderID, _ = r.body["orderId"].(string)
		}
	}
}

// TestReferenceShellFunction runs the reference's shell snippet (export
// and v1 function) with bash, curl and jq against a live gateway, in a
// directory holding the gateway's bootstrap.json as make run leaves it.
func TestReferenceShellFunction(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install %s): the snippet cannot run", tool, tool)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippet := regexp.MustCompile("(?s)```sh\n(export PG=.*?)```").FindSubmatch(doc)
	if snippet == nil {
		t.Fatal("docs/api.md has no ```sh block starting with export PG=")
	}
	g := startGateway(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".perpgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	boot, err := os.ReadFile(filepath.Join(g.cfg.DataDir, "bootstrap.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".perpgate", "bootstrap.json"), boot, 0o600); err != nil {
		t.Fatal(err)
	}
	// The snippet hard-codes localhost:8080; the test gateway listens elsewhere.
	script := strings.Replace(string(snippet[1]), "PG=http://localhost:8080", "PG="+g.URL(), 1)
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("snippet failed: %v\n%s", err, out)
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil || res["success"] != true || res["markPrice"] == nil {
		t.Fatalf("snippet answered %q", out)
	}
}
