package edge

import (
	"net/http"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/ratelimit"
)

// TestSetLimitHeaders: the six rate-limit fields, each its own value,
// under the names a client looks up.
func TestSetLimitHeaders(t *testing.T) {
	h := http.Header{}
	setLimitHeaders(h, ratelimit.Decision{LimitMinute: 30, RemainingMinute: 29, LimitDay: 5000, RemainingDay: 4990,
		ResetMinute: 41 * time.Second, ResetDay: 3600 * time.Second})
	want := map[string]string{
		"X-RateLimit-Limit-Minute":     "30",
		"X-RateLimit-Remaining-Minute": "29",
		"X-RateLimit-Limit-Day":        "5000",
		"X-RateLimit-Remaining-Day":    "4990",
		"RateLimit-Policy":             `"minute";q=30;w=60, "day";q=5000;w=86400`,
		"RateLimit":                    `"minute";r=29;t=41, "day";r=4990;t=3600`,
	}
	if len(h) != len(want) {
		t.Errorf("%d fields, want %d: %v", len(h), len(want), h)
	}
	for k, v := range want {
		if got := h.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want [%q]", k, got, v)
		}
	}
	h.Add("RateLimit", "extra") // appending to one field must not spill into another
	if got := h.Get("X-RateLimit-Limit-Minute"); got != "30" {
		t.Errorf("after Add: X-RateLimit-Limit-Minute = %q", got)
	}
}
