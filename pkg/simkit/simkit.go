// Package simkit holds what every venue simulator keeps beside its paper
// engine: the API keys it accepts, how often each endpoint was called, and
// the failures tests queue for the next call of an endpoint.
package simkit

import "sync"

// Book is a simulator's API keys (with what it knows of each: a secret, or
// more), hit counts and queued failures of type F. It is safe for
// concurrent use.
type Book[K, F any] struct {
	mu   sync.Mutex
	keys map[string]K
	hits map[string]int
	fail map[string][]F
}

// New returns a book accepting keys (API key → its secret).
func New[K, F any](keys map[string]K) *Book[K, F] {
	b := &Book[K, F]{keys: map[string]K{}, hits: map[string]int{}, fail: map[string][]F{}}
	for k, v := range keys {
		b.keys[k] = v
	}
	return b
}

// AddKey registers an API key and its secret.
func (b *Book[K, F]) AddKey(apiKey string, secret K) {
	b.mu.Lock()
	b.keys[apiKey] = secret
	b.mu.Unlock()
}

// Secret is the secret of apiKey; ok is false for an unknown key.
func (b *Book[K, F]) Secret(apiKey string) (secret K, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	secret, ok = b.keys[apiKey]
	return secret, ok
}

// Hit counts one request to method and path.
func (b *Book[K, F]) Hit(method, path string) {
	b.mu.Lock()
	b.hits[method+" "+path]++
	b.mu.Unlock()
}

// Hits counts the requests that reached method and path, e.g.
// Hits("POST", "/v5/order/create").
func (b *Book[K, F]) Hits(method, path string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits[method+" "+path]
}

// TotalHits counts every request.
func (b *Book[K, F]) TotalHits() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, v := range b.hits {
		n += v
	}
	return n
}

// FailNext queues f as the answer of the next request to method and path.
func (b *Book[K, F]) FailNext(method, path string, f F) {
	b.mu.Lock()
	b.fail[method+" "+path] = append(b.fail[method+" "+path], f)
	b.mu.Unlock()
}

// NextFailure takes the failure queued for method and path, if any.
func (b *Book[K, F]) NextFailure(method, path string) (f F, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fs := b.fail[method+" "+path]
	if len(fs) == 0 {
		return f, false
	}
	b.fail[method+" "+path] = fs[1:]
	return fs[0], true
}
