package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// allowScript checks and takes one slot in both windows atomically.
// KEYS: minute counter, day counter. ARGV: minute limit, day limit, minute
// TTL and day TTL in seconds. Returns {allowed (0/1), minute count, day
// count} after the check. Expiries are relative so that an injected clock
// far from Redis's own still yields live keys.
var allowScript = redis.NewScript(`
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
if m >= tonumber(ARGV[1]) or d >= tonumber(ARGV[2]) then
  return {0, m, d}
end
m = redis.call('INCR', KEYS[1])
if m == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
d = redis.call('INCR', KEYS[2])
if d == 1 then redis.call('EXPIRE', KEYS[2], ARGV[4]) end
return {1, m, d}
`)

// grace keeps a counter a little past its window so a replica whose clock
// lags slightly still finds it.
const grace = time.Minute

// Redis is a Limiter whose counters live in Redis, shared by every replica
// using the same prefix. Keys are <prefix>:{<key>}:m:<minute start, Unix
// seconds> and <prefix>:{<key>}:d:<yyyymmdd>; the braces keep both in one
// Redis Cluster slot, as the script needs.
type Redis struct {
	client redis.UniversalClient
	prefix string
	now    func() time.Time
}

var _ Limiter = (*Redis)(nil)

// NewRedis returns a limiter using client, naming its keys under prefix and
// reading time from now (nil means time.Now).
func NewRedis(client redis.UniversalClient, prefix string, now func() time.Time) *Redis {
	return &Redis{client: client, prefix: prefix, now: clock(now)}
}

// Allow implements Limiter with one script call (EVALSHA, loading the
// script on first use). It fails on invalid limits or a Redis error.
func (l *Redis) Allow(ctx context.Context, key string, lim Limits) (Decision, error) {
	if err := lim.check(); err != nil {
		return Decision{}, err
	}
	now := l.now()
	w := windowAt(now)
	keys, args := l.script(now, w, key, lim)
	res, err := allowScript.Run(ctx, l.client, keys, args...).Int64Slice()
	return decideScript(now, w, lim, res, err)
}

// script is the keys and arguments of allowScript for key at now.
func (l *Redis) script(now time.Time, w window, key string, lim Limits) ([]string, []any) {
	base := l.prefix + ":{" + key + "}"
	keys := []string{
		base + ":m:" + strconv.FormatInt(w.minute.Unix(), 10),
		base + ":d:" + w.day.Format("20060102"),
	}
	ttl := func(end time.Time) int64 { return int64((end.Sub(now) + grace + time.Second - 1) / time.Second) }
	return keys, []any{lim.PerMinute, lim.PerDay, ttl(w.minuteEnd), ttl(w.dayEnd)}
}

// decideScript turns allowScript's answer into a Decision.
func decideScript(now time.Time, w window, lim Limits, res []int64, err error) (Decision, error) {
	if err != nil {
		return Decision{}, fmt.Errorf("rate limit: %w", err)
	}
	if len(res) != 3 {
		return Decision{}, fmt.Errorf("rate limit: script returned %d values, want 3", len(res))
	}
	return decide(now, w, lim, res[0] == 1, int(res[1]), int(res[2])), nil
}
