package venuekit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// NonceSource hands out the nonces actions are signed with. Venues that
// sign with nonces (Hyperliquid keeps each signer's highest and accepts a
// new one only above the smallest kept, within a day of its clock) advise
// an atomic counter per signer, fast-forwarded to the current Unix
// milliseconds: both sources below are that counter, one per process and
// one shared.
type NonceSource interface {
	// Next returns a nonce for signer that no earlier call for that signer
	// (on any replica sharing the source) returned, and larger than all of
	// them. It fails only when the shared store cannot be reached.
	Next(ctx context.Context, signer string) (uint64, error)
}

// ClockedNonces is a NonceSource that can also count from a clock the
// caller gives, e.g. its estimate of the venue's clock (Aster refuses a
// nonce outside a window around its own time).
type ClockedNonces interface {
	NonceSource
	// NextAt is Next with now in place of the source's clock.
	NextAt(ctx context.Context, signer string, now time.Time) (uint64, error)
}

// count is now in unit (milliseconds unless set).
func count(now time.Time, unit time.Duration) uint64 {
	if unit <= 0 {
		unit = time.Millisecond
	}
	return uint64(now.UnixNano() / int64(unit))
}

// Nonces is the in-process NonceSource: millisecond timestamps, strictly
// increasing per signer within the process. When two calls land in the
// same millisecond the second is bumped by one, running slightly ahead of
// the clock, which the venue accepts.
//
// It is enough for one process (standalone). Replicas of a connector that
// sign for the same agent must share a RedisNonces instead: two processes
// reading the same millisecond would otherwise sign with the same nonce, and
// one replica's burst can push the signer's kept nonces above the other's
// clock.
type Nonces struct {
	now  func() time.Time
	unit time.Duration
	mu   sync.Mutex
	last map[string]*atomic.Uint64
}

var _ ClockedNonces = (*Nonces)(nil)

// NewNonces returns a nonce source on clock now (nil: time.Now).
func NewNonces(now func() time.Time) *Nonces {
	if now == nil {
		now = time.Now
	}
	return &Nonces{now: now, last: map[string]*atomic.Uint64{}}
}

// In makes the counter count in unit (Aster's nonces are microseconds).
func (n *Nonces) In(unit time.Duration) *Nonces { n.unit = unit; return n }

// Next implements NonceSource; it never fails.
func (n *Nonces) Next(ctx context.Context, signer string) (uint64, error) {
	return n.NextAt(ctx, signer, n.now())
}

// NextAt implements ClockedNonces; it never fails.
func (n *Nonces) NextAt(_ context.Context, signer string, now time.Time) (uint64, error) {
	n.mu.Lock()
	last, ok := n.last[signer]
	if !ok {
		last = new(atomic.Uint64)
		n.last[signer] = last
	}
	n.mu.Unlock()
	for {
		prev := last.Load()
		next := max(count(now, n.unit), prev+1)
		if last.CompareAndSwap(prev, next) {
			return next, nil
		}
	}
}

// nonceScript is the shared counter: max(now, last + 1), stored and
// returned in one atomic step. The key outlives a one-day nonce window
// (Hyperliquid's), after which a fresh start at the clock is valid again.
var nonceScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local n = now
if last >= n then n = last + 1 end
redis.call('SET', KEYS[1], string.format('%d', n), 'PX', ARGV[2])
return n
`)

// nonceKeyTTL keeps a signer's counter past the venue's nonce window.
const nonceKeyTTL = 48 * time.Hour

// RedisNonces is a NonceSource shared by connector replicas through Redis:
// one counter per signer, so no two replicas ever sign with the same nonce
// and every nonce is above all those handed out before it, whatever the
// replicas' clocks say.
type RedisNonces struct {
	rdb    redis.UniversalClient
	prefix string
	now    func() time.Time
	unit   time.Duration
}

var _ ClockedNonces = (*RedisNonces)(nil)

// NewRedisNonces keeps the counters under prefix in rdb; now may be nil
// (time.Now).
func NewRedisNonces(rdb redis.UniversalClient, prefix string, now func() time.Time) *RedisNonces {
	if now == nil {
		now = time.Now
	}
	return &RedisNonces{rdb: rdb, prefix: prefix, now: now}
}

// In makes the counter count in unit (Aster's nonces are microseconds).
func (r *RedisNonces) In(unit time.Duration) *RedisNonces { r.unit = unit; return r }

// Next implements NonceSource.
func (r *RedisNonces) Next(ctx context.Context, signer string) (uint64, error) {
	return r.NextAt(ctx, signer, r.now())
}

// NextAt implements ClockedNonces.
func (r *RedisNonces) NextAt(ctx context.Context, signer string, now time.Time) (uint64, error) {
	n, err := nonceScript.Run(ctx, r.rdb, []string{r.prefix + signer},
		count(now, r.unit), nonceKeyTTL.Milliseconds()).Int64()
	if err != nil {
		return 0, fmt.Errorf("next nonce of %s: %w", signer, err)
	}
	return uint64(n), nil
}
