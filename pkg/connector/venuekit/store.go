package venuekit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Store is a per-process map of values by key, safe for concurrent use:
// the default of a cache replicas may instead share (RedisCache).
type Store[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// NewStore is an empty store.
func NewStore[T any]() *Store[T] { return &Store[T]{m: map[string]T{}} }

// Get is key's value.
func (s *Store[T]) Get(key string) (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok
}

// Put sets key's value.
func (s *Store[T]) Put(key string, v T) {
	s.mu.Lock()
	s.m[key] = v
	s.mu.Unlock()
}

// Delete forgets key.
func (s *Store[T]) Delete(key string) {
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
}

// Flights is one lock per key, so concurrent callers of one key (a
// credential's login) take turns and the later ones reuse the first's
// result.
type Flights struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

// Lock takes key's lock; the caller calls the function it returns to
// release it.
func (f *Flights) Lock(key string) (unlock func()) {
	f.mu.Lock()
	if f.m == nil {
		f.m = map[string]*sync.Mutex{}
	}
	l := f.m[key]
	if l == nil {
		l = &sync.Mutex{}
		f.m[key] = l
	}
	f.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// redisTimeout bounds one cache read or write; a slow Redis means a miss
// (the replica does the work itself), never a stalled request.
const redisTimeout = 300 * time.Millisecond

// RedisCache keeps short-lived values replicas share (a venue's session
// token). Keys are stored as a hash under prefix, as they may name a
// credential; values expire from Redis with their ttl.
type RedisCache struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisCache stores under prefix in rdb.
func NewRedisCache(rdb redis.UniversalClient, prefix string) *RedisCache {
	return &RedisCache{rdb: rdb, prefix: prefix}
}

func (c *RedisCache) key(k string) string {
	sum := sha256.Sum256([]byte(k))
	return c.prefix + hex.EncodeToString(sum[:])
}

// Get is k's value; an error or a slow answer is a miss.
func (c *RedisCache) Get(k string) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	raw, err := c.rdb.Get(ctx, c.key(k)).Bytes()
	return raw, err == nil
}

// Set stores v for ttl; a value already expired is not stored.
func (c *RedisCache) Set(k string, v []byte, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	_ = c.rdb.Set(ctx, c.key(k), v, ttl).Err()
}

// Delete forgets k.
func (c *RedisCache) Delete(k string) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	_ = c.rdb.Del(ctx, c.key(k)).Err()
}
