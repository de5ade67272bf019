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

// benchLine is the DESIGN §11/§12 line, every field in order.
var benchLine = regexp.MustCompile(`^bench: gateway_rps=\d+ bare_rps=\d+ ratio=\d+\.\d\d p50_ms=\d+\.\d{3} p99_ms=\d+\.\d{3} ` +
	`c1_p50_ms=\d+\.\d{3} pipe_rps=\d+ dist_rps=\d+ dist_ratio=[\d.]+ dist_c1_p50_ms=[\d.]+ place_rps=\d+ cached_p99_ms=[\d.]+ rss_mib=\d+ ` +
	`bare_c1_p50_ms=\d+\.\d{3} pipe_c1_p50_ms=\d+\.\d{3} skel_rps=\d+ skel_c1_p50_ms=\d+\.\d{3} ` +
	`event_p50_ms=\d+\.\d{3} event_p99_ms=\d+\.\d{3} ` +
	`place_c1_p50_ms=\d+\.\d{3} place_c64_rps=\d+ place_flat_ratio=\d+\.\d\d dist_place_c1_p50_ms=\d+\.\d{3}$`)

// TestBenchLine runs `perpgate bench` briefly, with its targets and load
// generators as processes, and checks the line it ends with.
func TestBenchLine(t *testing.T) {
	// Parallel: it waits on its own processes most of the time.
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the benchmark's processes; skipped with -short")
	}
	// The distributed mode runs the service binaries found next to perpgate.
	bin := filepath.Join(testenv.Build(t, "./services/standalone/cmd/perpgate", "./services/edge/cmd/edge",
		"./services/keys/cmd/keys", "./services/connectors/paper/cmd/paper-venue",
		"./services/connectors/paper/cmd/connector-paper"), "perpgate")
	var out bytes.Buffer
	// A second per mode: every mode answers and is counted; CI stays quick.
	opts := BenchOptions{Concurrency: 4, Duration: time.Second, Warmup: 200 * time.Millisecond,
		C1Duration: time.Second, Rounds: 1, PlaceCount: 2000, Exe: bin}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := Bench(ctx, &out, opts, t.TempDir()); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !benchLine.MatchString(last) {
		t.Fatalf("last line %q does not have the bench fields\n%s", last, out.String())
	}
	if strings.Contains(last, "gateway_rps=0 ") || strings.Contains(last, "place_rps=0 ") || strings.Contains(last, "cached_p99_ms=0.000 ") {
		t.Fatalf("nothing measured: %s", last)
	}
	// With the local NATS, Redis and Postgres (the integration tests' own),
	// the raw pipeline and the distributed deployment are measured too.
	if localServicesMissing() == "" && (strings.Contains(last, "pipe_rps=0 ") || strings.Contains(last, "dist_rps=0 ") ||
		strings.Contains(last, "pipe_c1_p50_ms=0.000")) {
		t.Fatalf("pipe or dist not measured though the local services answer: %s\n%s", last, out.String())
	}
	for _, field := range []string{"place_c1_p50_ms=0.000 ", "place_c64_rps=0 ", "place_flat_ratio=0.00 "} {
		if strings.Contains(last, field) {
			t.Fatalf("placements not measured (%s): %s", field, last)
		}
	}
	if localServicesMissing() == "" && strings.HasSuffix(last, " dist_place_c1_p50_ms=0.000") {
		t.Fatalf("dist placements not measured though the local services answer: %s", last)
	}
	if strings.Contains(last, " rss_mib=0 ") {
		t.Fatalf("serve's RSS not read: %s", last)
	}
	for _, ref := range []string{"bare_c1_p50_ms=0.000", "skel_rps=0 ", "skel_c1_p50_ms=0.000", "event_p50_ms=0.000"} {
		if strings.Contains(last, ref) {
			t.Fatalf("a reference was not measured (%s): %s", ref, last)
		}
	}
	if strings.Contains(out.String(), "went to the venue") {
		t.Fatalf("reads of the c=1 runs were not served from the stream view:\n%s", out.String())
	}
	t.Log(out.String())
}
