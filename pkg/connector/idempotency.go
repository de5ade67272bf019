package connector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// IdempotencyTTL is how long a placement's result answers repeats of its
// (credential, clientOrderId) (DESIGN §6).
const IdempotencyTTL = 24 * time.Hour

// ErrInFlight means another placement with the same key has not finished.
var ErrInFlight = errors.New("placement with this clientOrderId is in flight")

// IdempotencyStore remembers placement results by key. Implementations must
// be safe across connector replicas when shared (Redis) and within one
// process (Memory).
type IdempotencyStore interface {
	// Claim reserves key for a new placement. When a result is already
	// stored it returns it and claimed=false; when another claim is in
	// flight it returns ErrInFlight.
	Claim(ctx context.Context, key string) (result []byte, claimed bool, err error)
	// Complete stores the result of a claimed placement.
	Complete(ctx context.Context, key string, result []byte) error
	// Release drops a claim whose placement failed, so a retry may place.
	Release(ctx context.Context, key string) error
}

// pendingMark is stored while a claim is in flight; results are JSON
// objects and never equal it.
const pendingMark = "\x00pending"

// MemoryIdempotency is an in-process IdempotencyStore for standalone.
type MemoryIdempotency struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]memEntry
	sweepAt time.Time
}

type memEntry struct {
	value   []byte
	expires time.Time
}

// NewMemoryIdempotency returns an empty store; now may be nil.
func NewMemoryIdempotency(now func() time.Time) *MemoryIdempotency {
	if now == nil {
		now = time.Now
	}
	return &MemoryIdempotency{now: now, entries: map[string]memEntry{}}
}

// Claim implements IdempotencyStore.
func (s *MemoryIdempotency) Claim(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	if e, ok := s.entries[key]; ok && now.Before(e.expires) {
		if string(e.value) == pendingMark {
			return nil, false, ErrInFlight
		}
		return e.value, false, nil
	}
	s.entries[key] = memEntry{value: []byte(pendingMark), expires: now.Add(IdempotencyTTL)}
	return nil, true, nil
}

// Complete implements IdempotencyStore.
func (s *MemoryIdempotency) Complete(_ context.Context, key string, result []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[key] = memEntry{value: append([]byte(nil), result...), expires: s.now().Add(IdempotencyTTL)}
	return nil
}

// Release implements IdempotencyStore.
func (s *MemoryIdempotency) Release(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, key)
	return nil
}

// sweep drops expired entries at most once a minute so memory stays bounded.
func (s *MemoryIdempotency) sweep(now time.Time) {
	if now.Before(s.sweepAt) {
		return
	}
	s.sweepAt = now.Add(time.Minute)
	for k, e := range s.entries {
		if !now.Before(e.expires) {
			delete(s.entries, k)
		}
	}
}

// RedisIdempotency is an IdempotencyStore shared by connector replicas.
type RedisIdempotency struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisIdempotency stores entries under prefix in rdb.
func NewRedisIdempotency(rdb redis.UniversalClient, prefix string) *RedisIdempotency {
	return &RedisIdempotency{rdb: rdb, prefix: prefix}
}

// Claim implements IdempotencyStore.
func (s *RedisIdempotency) Claim(ctx context.Context, key string) ([]byte, bool, error) {
	k := s.prefix + key
	ok, err := s.rdb.SetNX(ctx, k, pendingMark, IdempotencyTTL).Result()
	if err != nil {
		return nil, false, fmt.Errorf("claim idempotency key: %w", err)
	}
	if ok {
		return nil, true, nil
	}
	v, err := s.rdb.Get(ctx, k).Bytes()
	if errors.Is(err, redis.Nil) { // released between the two calls: try once more
		return s.Claim(ctx, key)
	}
	if err != nil {
		return nil, false, fmt.Errorf("read idempotency key: %w", err)
	}
	if string(v) == pendingMark {
		return nil, false, ErrInFlight
	}
	return v, false, nil
}

// Complete implements IdempotencyStore.
func (s *RedisIdempotency) Complete(ctx context.Context, key string, result []byte) error {
	if err := s.rdb.Set(ctx, s.prefix+key, result, IdempotencyTTL).Err(); err != nil {
		return fmt.Errorf("store idempotent result: %w", err)
	}
	return nil
}

// Release implements IdempotencyStore.
func (s *RedisIdempotency) Release(ctx context.Context, key string) error {
	if err := s.rdb.Del(ctx, s.prefix+key).Err(); err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}
