package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"
)

// dialTimeout bounds every connection attempt, so a missing service costs
// a test at most this long before it skips.
const dialTimeout = 2 * time.Second

// requireEnv makes unreachable services fail tests instead of skipping them.
const requireEnv = "PERPGATE_REQUIRE_SERVICES"

// env returns the value of name, or def when it is unset or empty.
func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// unavailable skips t because a service cannot be reached, saying how to
// start it, or fails t when PERPGATE_REQUIRE_SERVICES=1.
func unavailable(t testing.TB, service, url string, err error, start string) {
	t.Helper()
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s at %s is unreachable (%v) and %s=1; start it with: %s", service, url, err, requireEnv, start)
	}
	t.Skipf("%s at %s is unreachable (%v); start it with: %s (set %s=1 to fail instead of skip)", service, url, err, start, requireEnv)
}

// Prefix returns a name unique to this test run, usable as a Redis key
// prefix, a NATS subject token and a Postgres identifier: lower-case
// letters, digits and underscores, starting with "t_" and at most 40
// characters.
func Prefix(t testing.TB) string {
	t.Helper()
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("testenv prefix: %v", err)
	}
	var name strings.Builder
	for _, c := range strings.ToLower(t.Name()) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			name.WriteRune(c)
		case name.Len() > 0 && !strings.HasSuffix(name.String(), "_"):
			name.WriteByte('_')
		}
		if name.Len() >= 26 {
			break
		}
	}
	return "t_" + strings.TrimSuffix(name.String(), "_") + "_" + hex.EncodeToString(b[:])
}
