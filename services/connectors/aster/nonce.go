package aster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// NonceSource hands out the `nonce` of signed requests: microseconds,
// strictly increasing per signer (fact sheet §0 #3). The venue keeps each
// signer's last 100 nonces and refuses a repeat or one below them, so two
// replicas signing for the same API wallet must share one counter
// (RedisNonces); ccxt's ms×1000 collides within a millisecond.
type NonceSource interface {
	// Next returns a nonce for signer at or after now (the venue's clock
	// as the caller estimates it) and above every one handed out before
	// for it on every replica sharing the source.
	Next(ctx context.Context, signer string, now time.Time) (uint64, error)
}

// Nonces is the in-process NonceSource: max(now µs, last+1) per signer.
type Nonces struct {
	mu   sync.Mutex
	last map[string]uint64
}

// NewNonces returns an empty in-process nonce source.
func NewNonces() *Nonces { return &Nonces{last: map[string]uint64{}} }

// Next implements NonceSource; it never fails.
func (n *Nonces) Next(_ context.Context, signer string, now time.Time) (uint64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	next := max(uint64(now.UnixMicro()), n.last[signer]+1)
	n.last[signer] = next
	return next, nil
}

// nonceScript is the shared counter: max(now, last + 1), stored and
// returned in one atomic step.
var nonceScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local n = now
if last >= n then n = last + 1 end
redis.call('SET', KEYS[1], string.format('%d', n), 'PX', ARGV[2])
return n
`)

// nonceKeyTTL keeps a counter well past the venue's nonce window (±60 s).
const nonceKeyTTL = time.Hour

// RedisNonces is the NonceSource replicas share through Redis: one
// counter per signer, whatever the replicas' clocks say.
type RedisNonces struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisNonces keeps the counters under prefix.
func NewRedisNonces(rdb redis.UniversalClient, prefix string) *RedisNonces {
	return &RedisNonces{rdb: rdb, prefix: prefix}
}

// Next implements NonceSource.
func (r *RedisNonces) Next(ctx context.Context, signer string, now time.Time) (uint64, error) {
	n, err := nonceScript.Run(ctx, r.rdb, []string{r.prefix + signer},
		now.UnixMicro(), nonceKeyTTL.Milliseconds()).Int64()
	if err != nil {
		return 0, fmt.Errorf("next nonce of %s: %w", signer, err)
	}
	return uint64(n), nil
}
