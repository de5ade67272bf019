package edge

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"golang.org/x/sync/singleflight"
)

// directory answers key and credential look-ups from an in-process cache,
// asking the keys service on a miss. Change events drop entries; a
// generation counter keeps a look-up that raced with an event from
// re-inserting what the event dropped. Concurrent misses on one entry share
// one look-up, so a burst on a cold edge costs the keys service one request.
type directory struct {
	nc       *nats.Conn
	subjects contract.Subjects
	ttl      time.Duration
	now      func() time.Time
	flight   singleflight.Group
	observe  func(contract.ChangeEvent) // told of every change event, after the cache dropped its entries

	mu    sync.Mutex
	gen   uint64
	keys  map[string]cached[contract.KeyInfo]
	creds map[string]cached[contract.CredentialInfo]
}

type cached[T any] struct {
	val     T
	expires time.Time
}

// maxEntries bounds each cache; past it the cache starts over, which only
// costs look-ups.
const maxEntries = 100_000

func newDirectory(nc *nats.Conn, s contract.Subjects, ttl time.Duration, now func() time.Time) *directory {
	return &directory{nc: nc, subjects: s, ttl: ttl, now: now,
		keys: map[string]cached[contract.KeyInfo]{}, creds: map[string]cached[contract.CredentialInfo]{}}
}

// subscribe listens for change events; it returns once the subscription is
// registered on the server, so a revocation after it is never missed. An
// event published while this edge was cut off from NATS never reaches it,
// so after every reconnect the cache starts over.
func (d *directory) subscribe() (*nats.Subscription, error) {
	sub, err := d.nc.Subscribe(d.subjects.Events(), d.onEvent)
	if err != nil {
		return nil, err
	}
	prev := d.nc.Opts.ReconnectedCB
	d.nc.SetReconnectHandler(func(nc *nats.Conn) {
		d.reset()
		if prev != nil {
			prev(nc)
		}
	})
	return sub, d.nc.Flush()
}

// reset drops every cached entry; look-ups in flight do not store theirs.
func (d *directory) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	for k := range d.keys {
		d.flight.Forget("key:" + k)
	}
	for id := range d.creds {
		d.flight.Forget("cred:" + id)
	}
	d.keys = map[string]cached[contract.KeyInfo]{}
	d.creds = map[string]cached[contract.CredentialInfo]{}
}

func (d *directory) onEvent(m *nats.Msg) {
	var ev contract.ChangeEvent
	if json.Unmarshal(m.Data, &ev) != nil {
		return
	}
	if d.observe != nil {
		defer d.observe(ev) // runs after the unlock below
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	switch ev.Kind {
	case contract.KeyRevoked, contract.KeyUpdated:
		d.flight.Forget("key:" + ev.KeyHash) // later callers must not join a look-up from before the event
		delete(d.keys, ev.KeyHash)
		for h, k := range d.keys {
			if k.val.ID == ev.KeyID {
				delete(d.keys, h)
			}
		}
	case contract.CredentialDeleted:
		d.flight.Forget("cred:" + ev.CredentialID)
		delete(d.creds, ev.CredentialID)
	}
}

func (d *directory) key(ctx context.Context, hash string) (contract.KeyInfo, error) {
	d.mu.Lock()
	if e, ok := d.keys[hash]; ok && d.now().Before(e.expires) {
		d.mu.Unlock()
		return e.val, nil
	}
	d.mu.Unlock()
	return d.lookupKey(ctx, hash)
}

// lookupKey asks the keys service for hash, once for all concurrent
// callers. A caller that missed the cache just before another's look-up
// stored its answer starts a flight of its own after that one ended, so
// the flight looks at the cache again before it asks: a burst on a cold
// edge costs one request, however its goroutines are scheduled.
func (d *directory) lookupKey(ctx context.Context, hash string) (contract.KeyInfo, error) {
	return shared(ctx, &d.flight, "key:"+hash, func(ctx context.Context) (contract.KeyInfo, error) {
		d.mu.Lock()
		if e, ok := d.keys[hash]; ok && d.now().Before(e.expires) {
			d.mu.Unlock()
			return e.val, nil
		}
		gen := d.gen
		d.mu.Unlock()
		var k contract.KeyInfo
		if err := bus.Request(ctx, d.nc, d.subjects.KeyLookup(), nil, contract.KeyLookupRequest{Hash: hash}, &k); err != nil {
			return k, err
		}
		d.mu.Lock()
		if d.gen == gen {
			if len(d.keys) >= maxEntries {
				d.keys = map[string]cached[contract.KeyInfo]{}
			}
			d.keys[hash] = cached[contract.KeyInfo]{val: k, expires: d.now().Add(d.ttl)}
		}
		d.mu.Unlock()
		return k, nil
	})
}

func (d *directory) credential(ctx context.Context, id string) (contract.CredentialInfo, error) {
	d.mu.Lock()
	if e, ok := d.creds[id]; ok && d.now().Before(e.expires) {
		d.mu.Unlock()
		return e.val, nil
	}
	d.mu.Unlock()
	return d.lookupCredential(ctx, id)
}

// lookupCredential is lookupKey for a credential.
func (d *directory) lookupCredential(ctx context.Context, id string) (contract.CredentialInfo, error) {
	return shared(ctx, &d.flight, "cred:"+id, func(ctx context.Context) (contract.CredentialInfo, error) {
		d.mu.Lock()
		if e, ok := d.creds[id]; ok && d.now().Before(e.expires) {
			d.mu.Unlock()
			return e.val, nil
		}
		gen := d.gen
		d.mu.Unlock()
		var c contract.CredentialInfo
		if err := bus.Request(ctx, d.nc, d.subjects.CredentialLookup(), nil, contract.CredentialLookupRequest{CredentialID: id}, &c); err != nil {
			return c, err
		}
		d.mu.Lock()
		if d.gen == gen {
			if len(d.creds) >= maxEntries {
				d.creds = map[string]cached[contract.CredentialInfo]{}
			}
			d.creds[id] = cached[contract.CredentialInfo]{val: c, expires: d.now().Add(d.ttl)}
		}
		d.mu.Unlock()
		return c, nil
	})
}

// lookupTimeout bounds a shared look-up. The keys service answers in
// milliseconds; one that takes a second is hung, and the client hears 503
// SERVICE_UNAVAILABLE at once instead of waiting out its whole deadline.
const lookupTimeout = time.Second

// shared runs lookup once for all concurrent callers of key. The look-up
// keeps the first caller's deadline (at most lookupTimeout) but not its cancellation (one client
// hanging up must not fail the others); each caller waits on its own ctx.
func shared[T any](ctx context.Context, g *singleflight.Group, key string, lookup func(context.Context) (T, error)) (T, error) {
	ch := g.DoChan(key, func() (any, error) {
		deadline := time.Now().Add(lookupTimeout)
		if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
			deadline = dl
		}
		lctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		return lookup(lctx)
	})
	select {
	case r := <-ch:
		v, _ := r.Val.(T)
		return v, r.Err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
