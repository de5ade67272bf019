package telemetry

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestRepeatedWarningsLimited: 10,000 identical warnings in one window
// write repeatBurst lines; the next window's first line comes with one
// saying how many were left out. Info lines and other messages pass.
func TestRepeatedWarningsLimited(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1_700_000_000, 0)
	log := slog.New(limitRepeats(slog.NewJSONHandler(&buf, nil), func() time.Time { return now }))
	for i := range 10_000 {
		log.Warn("idempotency store unavailable", "err", "write /data/idempotency.log: no space left on device", "i", i)
		log.Info("request done", "i", i)
	}
	log.Error("another fault")
	lines := func(msg string) []map[string]any {
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
				out = append(out, m)
			}
		}
		return out
	}
	if n := len(lines("idempotency store unavailable")); n != repeatBurst {
		t.Fatalf("%d repeated warnings written, want %d", n, repeatBurst)
	}
	if n := len(lines("request done")); n != 10_000 {
		t.Fatalf("%d info lines, want all 10000", n)
	}
	if n := len(lines("another fault")); n != 1 {
		t.Fatalf("another message was held back: %d", n)
	}
	now = now.Add(repeatWindow)
	log.Warn("idempotency store unavailable", "err", "again")
	sum := lines("repeated log lines left out")
	if len(sum) != 1 || sum[0]["repeated_msg"] != "idempotency store unavailable" || sum[0]["left_out"] != float64(10_000-repeatBurst) {
		t.Fatalf("summary lines %v, want one saying %d were left out", sum, 10_000-repeatBurst)
	}
	if n := len(lines("idempotency store unavailable")); n != repeatBurst+1 {
		t.Fatalf("the next window's line: %d lines, want %d", n, repeatBurst+1)
	}
}
