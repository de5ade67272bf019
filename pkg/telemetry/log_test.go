package telemetry_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/redis/go-redis/v9"
)

// TestRouteRedisLogs: what go-redis logs by itself (here: a pool that
// cannot dial) arrives as structured lines of the service's logger.
func TestRouteRedisLogs(t *testing.T) {
	var out testenv.Output
	telemetry.RouteRedisLogs(slog.New(slog.NewJSONHandler(&out, nil)))
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := 0; i < 10 && ctx.Err() == nil && !strings.Contains(out.String(), "redis client"); i++ {
		_ = rdb.Ping(ctx).Err()
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var rec map[string]any
	if len(lines) == 0 || json.Unmarshal([]byte(lines[0]), &rec) != nil || rec["msg"] != "redis client" || rec["level"] != "WARN" {
		t.Fatalf("go-redis's own messages did not reach the logger as JSON: %q", out.String())
	}
}
