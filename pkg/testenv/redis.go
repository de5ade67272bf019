package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const redisStart = `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`

// Redis returns a client of the test Redis, PERPGATE_TEST_REDIS_URL or
// redis://127.0.0.1:6379/0, closed when the test ends. Name keys under
// Prefix, or use RedisPrefix to have them deleted. It skips t (or fails it
// with PERPGATE_REQUIRE_SERVICES=1) when Redis is unreachable.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	url := env("PERPGATE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("PERPGATE_TEST_REDIS_URL %q: %v", url, err)
	}
	opts.DialTimeout = dialTimeout
	c := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		unavailable(t, "Redis", url, err, redisStart)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// RedisPrefix returns a Redis client and a test-unique key prefix; every
// key starting with the prefix is deleted when the test ends.
func RedisPrefix(t testing.TB) (*redis.Client, string) {
	t.Helper()
	c := Redis(t)
	prefix := Prefix(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("testenv: scan redis keys %s*: %v", prefix, err)
			return
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				t.Errorf("testenv: delete redis keys %s*: %v", prefix, err)
			}
		}
	})
	return c, prefix
}
