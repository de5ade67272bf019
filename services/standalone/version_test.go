package standalone

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// TestOneVersion (DESIGN §13): the VERSION file holds one semantic version,
// and the release constant, OpenAPI info.version (file and served), MCP
// serverInfo.version, the CHANGELOG's newest release heading, the prod
// overlay's image tags and a `make`-built `perpgate --version` all carry it.
func TestOneVersion(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	v := strings.TrimSpace(read("VERSION"))
	if !regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`).MatchString(v) {
		t.Fatalf("VERSION %q is not a semantic version X.Y.Z", v)
	}
	if contract.Version != v {
		t.Errorf("contract.Version %q, VERSION %q", contract.Version, v)
	}

	var doc struct {
		Info struct{ Version string } `json:"info"`
	}
	if err := json.Unmarshal([]byte(read("pkg/contract/openapi.json")), &doc); err != nil || doc.Info.Version != v {
		t.Errorf("openapi.json info.version %q (%v), want %q", doc.Info.Version, err, v)
	}
	g := startGateway(t)
	r := g.do(mustRequest(t, http.MethodGet, g.URL()+"/openapi.json", ""))
	if info, _ := r.body["info"].(map[string]any); info["version"] != v {
		t.Errorf("served info %v, want version %q", r.body["info"], v)
	}
	if got := mustConnectMCP(t, g, "streamable", g.Bootstrap().APIKey).cs.InitializeResult().ServerInfo.Version; got != v {
		t.Errorf("MCP serverInfo.version %q, want %q", got, v)
	}

	release := regexp.MustCompile(`(?m)^## \[([0-9][^\]]*)\]`).FindStringSubmatch(read("CHANGELOG.md"))
	if release == nil || release[1] != v {
		t.Errorf("CHANGELOG's newest release heading %v, want [%s]", release, v)
	}
	tags := regexp.MustCompile(`newTag: "?([^" }]+)`).FindAllStringSubmatch(read("k8s/overlays/prod/kustomization.yaml"), -1)
	if len(tags) == 0 {
		t.Error("the prod overlay pins no image tag")
	}
	for _, tag := range tags {
		if tag[1] != v {
			t.Errorf("prod image tag %q, want %q", tag[1], v)
		}
	}

	bin := filepath.Join(t.TempDir(), "perpgate")
	out, err := exec.Command("make", "-s", "-C", root, "print-ldflags").Output()
	if err != nil {
		t.Fatalf("make print-ldflags: %v", err)
	}
	build := exec.Command("go", "build", "-ldflags", strings.TrimSpace(string(out)), "-o", bin, "./cmd/perpgate")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	got, err := exec.Command(bin, "--version").Output()
	if err != nil || !regexp.MustCompile(`^perpgate `+regexp.QuoteMeta(v)+` \([0-9a-f]{12}(-dirty)?\)\n$`).Match(got) {
		t.Errorf("perpgate --version: %q (%v), want \"perpgate %s (commit)\"", got, err, v)
	}
}

// TestDocsGoVersion: the Go version README and CONTRIBUTING ask for is the
// one go.work needs.
func TestDocsGoVersion(t *testing.T) {
	root := filepath.Join("..", "..")
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(work)
	if m == nil {
		t.Fatal("go.work has no go line")
	}
	for _, doc := range []string{"README.md", "CONTRIBUTING.md"} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range regexp.MustCompile(`Go (1\.[0-9]+(?:\.[0-9]+)?)`).FindAllSubmatch(b, -1) {
			if string(v[1]) != string(m[1]) {
				t.Errorf("%s says Go %s; go.work needs %s", doc, v[1], m[1])
			}
		}
	}
}
