package ratelimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/testenv"
)

func TestRedis(t *testing.T) {
	testLimiter(t, func(t *testing.T, now func() time.Time) ratelimit.Limiter {
		c, prefix := testenv.RedisPrefix(t)
		return ratelimit.NewRedis(c, prefix, now)
	})
}

func TestRedisReplicasShareCounters(t *testing.T) {
	_, prefix := testenv.RedisPrefix(t)
	clk := testenv.NewClock(at(t, "2025-03-09T12:00:00Z"))
	a := ratelimit.NewRedis(testenv.Redis(t), prefix, clk.Now)
	b := ratelimit.NewRedis(testenv.Redis(t), prefix, clk.Now)
	ok, no := hammer(t, 200, ratelimit.Limits{PerMinute: 30, PerDay: 5000}, a, b)
	if ok != 30 || no != 170 {
		t.Fatalf("allowed %d, denied %d across two replicas; want 30 and 170", ok, no)
	}
}

func TestRedisKeys(t *testing.T) {
	c, prefix := testenv.RedisPrefix(t)
	clk := testenv.NewClock(at(t, "2025-03-09T12:00:15Z"))
	l := ratelimit.NewRedis(c, prefix, clk.Now)
	if _, err := l.Allow(context.Background(), "key-1", ratelimit.Limits{PerMinute: 5, PerDay: 10}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name           string
		key            string
		count          string
		minTTL, maxTTL time.Duration
	}{
		// 2025-03-09T12:00:00Z is Unix 1741521600; the minute ends in 45 s,
		// the day in 11 h 59 min 45 s; both keys live one more minute.
		{name: "minute", key: prefix + ":{key-1}:m:1741521600", count: "1", minTTL: 100 * time.Second, maxTTL: 106 * time.Second},
		{name: "day", key: prefix + ":{key-1}:d:20250309", count: "1", minTTL: 12*time.Hour + 40*time.Second, maxTTL: 12*time.Hour + 46*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Get(ctx, tt.key).Result()
			if err != nil || got != tt.count {
				t.Fatalf("GET %s = %q, %v; want %q", tt.key, got, err, tt.count)
			}
			ttl, err := c.TTL(ctx, tt.key).Result()
			if err != nil || ttl < tt.minTTL || ttl > tt.maxTTL {
				t.Fatalf("TTL %s = %v, %v; want within [%v, %v]", tt.key, ttl, err, tt.minTTL, tt.maxTTL)
			}
		})
	}
}

func TestRedisUnreachable(t *testing.T) {
	c := testenv.Redis(t)
	l := ratelimit.NewRedis(c, testenv.Prefix(t), nil)
	c.Close()
	_, err := l.Allow(context.Background(), "mt_live_secret", ratelimit.Limits{PerMinute: 1, PerDay: 1})
	if err == nil || !strings.HasPrefix(err.Error(), "rate limit: ") {
		t.Fatalf("err = %v, want a wrapped Redis error", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("error %q names the key", err)
	}
}
