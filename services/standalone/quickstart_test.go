package standalone

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestQuickstart runs the README's quickstart, every block in order, and
// examples/quickstart.sh against a live `perpgate serve` process, from a
// directory laid out as `make run` leaves it (bin/perpgate,
// .perpgate/bootstrap.json). Each call must succeed as printed.
func TestQuickstart(t *testing.T) {
	// Parallel: it waits on its own perpgate serve most of the time.
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs perpgate serve; skipped with -short")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install %s): the quickstart cannot run", tool, tool)
		}
	}
	bins := testenv.Build(t, "./services/standalone/cmd/perpgate")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bins, "perpgate"), filepath.Join(dir, "bin", "perpgate")); err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	adminAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	serve := testenv.Start(t, "perpgate serve", filepath.Join(bins, "perpgate"), map[string]string{
		"PERPGATE_DATA_DIR": filepath.Join(dir, ".perpgate"), "PERPGATE_LISTEN_ADDR": listen,
		"PERPGATE_ADMIN_ADDR": adminAddr, "PERPGATE_LOG_FORMAT": "json",
	}, "serve")
	serve.Field(t, "edge listening", "addr")
	pg := "http://" + listen
	env := append(os.Environ(), "PERPGATE_ADMIN_URL=http://"+adminAddr)
	run := func(name, script string, extra ...string) {
		t.Helper()
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir, cmd.Env = dir, append(env, extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s failed: %v\n%s", name, err, out)
		}
		t.Logf("%s:\n%s", name, out)
	}

	// The README's blocks, in order, as a reader pastes them.
	blocks := readmeBlocks(t, "Quickstart", "Trade on a real exchange")
	if len(blocks) < 5 {
		t.Fatalf("the quickstart has %d shell blocks", len(blocks))
	}
	s := "set -euo pipefail\n" + strings.Join(blocks, "")
	if !strings.Contains(s, "PG=http://localhost:8080\n") {
		t.Fatal("the quickstart does not set PG=http://localhost:8080")
	}
	run("README quickstart", strings.Replace(s, "PG=http://localhost:8080\n", "PG="+pg+"\n", 1))

	root := testenv.WorkspaceRoot(t)
	run("examples/quickstart.sh", "bash "+filepath.Join(root, "examples", "quickstart.sh"), "PG="+pg)

	// The usage guide's CLI block, as printed.
	guide, err := os.ReadFile(filepath.Join(root, "docs", "guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The usage guide's shell blocks from its CLI block on, in one shell.
	from := strings.Index(string(guide), "```sh\nexport PERPGATE_ADMIN_TOKEN")
	if from < 0 {
		t.Fatal("docs/guide.md has no CLI block")
	}
	var guideScript strings.Builder
	guideScript.WriteString("set -euo pipefail\n")
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(guide[from:]), -1) {
		guideScript.WriteString(b[1])
	}
	run("docs/guide.md CLI", guideScript.String())

	// The API reference's examples in order, through its own shell function.
	api, err := os.ReadFile(filepath.Join(root, "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	fn := regexp.MustCompile("(?s)```sh\n(export PG=.*?\nv1\\(\\) .*?\n)").FindSubmatch(api)
	if fn == nil {
		t.Fatal("docs/api.md has no v1 function")
	}
	var calls strings.Builder
	calls.WriteString("set -euo pipefail\n" + strings.Replace(string(fn[1]), "PG=http://localhost:8080", "PG="+pg, 1))
	for _, e := range contract.Examples {
		line := "out=$(v1 '" + e.Body("$CRED") + "')\necho \"$out\"\n" +
			`[ "$(jq -r .success <<<"$out")" = true ] || { echo "` + e.Operation + ` failed"; exit 1; }` + "\n"
		if e.Operation == contract.OpPlaceLimitOrder {
			line += `[ -n "${ORDER_ID:-}" ] || ORDER_ID=$(jq -r .orderId <<<"$out")` + "\n"
		}
		calls.WriteString(strings.ReplaceAll(line, "$ORDER_ID", "'\"$ORDER_ID\"'"))
	}
	run("docs/api.md examples", calls.String())
}

// readmeBlocks returns the shell blocks of the README from the section
// titled from up to the one titled to, in order.
func readmeBlocks(t *testing.T, from, to string) []string {
	t.Helper()
	doc := readme(t)
	start, end := strings.Index(doc, "\n## "+from+"\n"), strings.Index(doc, "\n## "+to+"\n")
	if start < 0 || end < start {
		t.Fatalf("README has no section %q before %q", from, to)
	}
	var out []string
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(doc[start:end], -1) {
		out = append(out, b[1])
	}
	return out
}
