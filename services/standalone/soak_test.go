package standalone

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
)

var soakLine = regexp.MustCompile(`^soak: pairs=\d+ failed=0 rss_warm_mib=\d+ rss_end_mib=\d+ rss_growth_pct=-?[\d.]+ ` +
	`disk_per_1000_kib=[\d.]+ restart_ms=\d+$`)

// TestSoakLine runs a short `perpgate bench --soak` (the real one, a
// million pairs, is not part of the tests) and checks what it reports.
func TestSoakLine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs serve and load generator processes; skipped with -short")
	}
	bin := filepath.Join(testenv.Build(t, "./services/standalone/cmd/perpgate"), "perpgate")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := Soak(ctx, &out, SoakOptions{Pairs: 200, Rate: 200, Exe: bin}, t.TempDir()); err != nil {
		t.Fatalf("soak: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !soakLine.MatchString(last) || strings.Contains(last, "rss_end_mib=0 ") || strings.Contains(last, "disk_per_1000_kib=0.0 ") {
		t.Fatalf("last line %q lacks the soak's figures\n%s", last, out.String())
	}
	if !strings.Contains(out.String(), "paper.journal") || !strings.Contains(out.String(), "idempotency.log") {
		t.Fatalf("no data directory breakdown:\n%s", out.String())
	}
	t.Log(out.String())
}
