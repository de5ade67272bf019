package standalone

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// publicDocs are the hosts a Markdown file may link to: the venues' and
// libraries' public documentation and standards bodies.
var publicDocs = []string{
	"developers.binance.com", "www.binance.com", "demo.binance.com", "testnet.binancefuture.com", "hyperliquid.gitbook.io", "app.hyperliquid.xyz", "app.hyperliquid-testnet.xyz",
	"bybit-exchange.github.io", "www.bybit.com", "testnet.bybit.com", "www.okx.com", "docs.paradex.trade", "app.paradex.trade", "www.asterdex.com", "www.asterdex-testnet.com",
	"github.com", "pkg.go.dev", "go.dev", "www.npmjs.com", "modelcontextprotocol.io", "docs.nats.io", "redis.io",
	"www.postgresql.org", "kubernetes.io", "docs.docker.com", "keepachangelog.com", "semver.org", "www.apache.org",
	"datatracker.ietf.org", "www.rfc-editor.org", "opentelemetry.io", "spec.openapis.org", "json-schema.org",
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)|<(https?://[^>\s]+)>`)

// TestMarkdownLinks: no relative link in any Markdown file of the
// repository leaves it or points at a missing file, and absolute links go
// only to public documentation.
func TestMarkdownLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "*.md").Output()
	if err != nil {
		t.Skipf("git ls-files unavailable: %v", err)
	}
	absRoot, _ := filepath.Abs(root)
	files := strings.Fields(string(out))
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			link := m[1] + m[2]
			switch {
			case strings.HasPrefix(link, "#"), strings.HasPrefix(link, "mailto:"):
			case strings.HasPrefix(link, "http://"), strings.HasPrefix(link, "https://"):
				u, err := url.Parse(link)
				if err != nil || !allowed(u.Host) {
					t.Errorf("%s links to %s: only public venue, library or standards documentation", f, link)
				}
			default:
				target, _, _ := strings.Cut(link, "#")
				abs, _ := filepath.Abs(filepath.Join(root, filepath.Dir(f), target))
				if !strings.HasPrefix(abs, absRoot+string(filepath.Separator)) && abs != absRoot {
					t.Errorf("%s links to %s, outside the repository", f, link)
				} else if _, err := os.Stat(abs); err != nil {
					t.Errorf("%s links to %s, which does not exist", f, link)
				}
			}
		}
		if strings.Contains(string(data), "shared/") {
			t.Errorf("%s mentions shared/, which users of the repository do not have", f)
		}
	}
}

func allowed(host string) bool {
	for _, h := range publicDocs {
		if host == h {
			return true
		}
	}
	return false
}
