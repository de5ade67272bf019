package venuekit

import (
	"sync"
	"time"
)

// Memo keeps what was read of an account (its position mode, its
// configuration) for a while, so not every order reads it again. Keys are
// the caller's (host and API key, symbol where the venue sets it per
// symbol).
type Memo[T any] struct {
	mu sync.Mutex
	m  map[string]memoEntry[T]
}

type memoEntry[T any] struct {
	v  T
	at time.Time
}

// Put records v for key as read at now.
func (m *Memo[T]) Put(key string, v T, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]memoEntry[T]{}
	}
	m.m[key] = memoEntry[T]{v: v, at: now}
}

// Get is key's value when it was read less than ttl before now.
func (m *Memo[T]) Get(key string, now time.Time, ttl time.Duration) (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok || now.Sub(e.at) >= ttl {
		var zero T
		return zero, false
	}
	return e.v, true
}

// Forget drops key (the venue said it changed).
func (m *Memo[T]) Forget(key string) {
	m.mu.Lock()
	delete(m.m, key)
	m.mu.Unlock()
}
