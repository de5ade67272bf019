package connector

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
)

// secretCache fetches credential secrets from the keys service and keeps
// them briefly, so a burst of requests costs one round trip. Entries are
// dropped on credential-deleted events.
type secretCache struct {
	nc       *nats.Conn
	subject  string
	ttl      time.Duration
	now      func() time.Time
	mu       sync.Mutex
	entries  map[string]secretEntry
	inflight map[string]*secretCall
}

type secretEntry struct {
	cred    Credential
	expires time.Time
}

type secretCall struct {
	done chan struct{}
	cred Credential
	err  error
}

func newSecretCache(nc *nats.Conn, subject string, ttl time.Duration, now func() time.Time) *secretCache {
	return &secretCache{nc: nc, subject: subject, ttl: ttl, now: now,
		entries: map[string]secretEntry{}, inflight: map[string]*secretCall{}}
}

// get returns the credential with its secret; concurrent misses for one
// credential share a single request.
func (c *secretCache) get(ctx context.Context, id string) (Credential, error) {
	c.mu.Lock()
	if e, ok := c.entries[id]; ok && c.now().Before(e.expires) {
		c.mu.Unlock()
		return e.cred, nil
	}
	call, ok := c.inflight[id]
	if !ok {
		call = &secretCall{done: make(chan struct{})}
		c.inflight[id] = call
		c.mu.Unlock()
		call.cred, call.err = c.fetch(ctx, id)
		c.mu.Lock()
		delete(c.inflight, id)
		if call.err == nil {
			c.entries[id] = secretEntry{cred: call.cred, expires: c.now().Add(c.ttl)}
		}
		close(call.done)
		c.mu.Unlock()
		return call.cred, call.err
	}
	c.mu.Unlock()
	select {
	case <-call.done:
		return call.cred, call.err
	case <-ctx.Done():
		return Credential{}, ctx.Err()
	}
}

func (c *secretCache) fetch(ctx context.Context, id string) (Credential, error) {
	var resp contract.SecretResponse
	if err := bus.Request(ctx, c.nc, c.subject, nil, contract.SecretRequest{CredentialID: id}, &resp); err != nil {
		if _, ok := err.(*contract.Error); ok {
			return Credential{}, err
		}
		if bus.IsTimeout(err) {
			return Credential{}, err
		}
		// The keys service being down is an outage of this path, not a gateway bug.
		return Credential{}, contract.Errorf(contract.CodeExchangeUnavailable,
			"the credential store is not reachable; try again shortly")
	}
	return Credential{CredentialInfo: resp.Credential, Secret: resp.Secret}, nil
}

func (c *secretCache) drop(id string) {
	c.mu.Lock()
	delete(c.entries, id)
	c.mu.Unlock()
}
