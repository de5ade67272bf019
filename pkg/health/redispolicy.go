package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisPolicyEvery is how often a RedisPolicy reads the policy again: an
// operator (or a managed service's parameter group) can change it at any
// time.
const RedisPolicyEvery = 5 * time.Second

// RedisPolicy watches the maxmemory-policy of the Redis holding the
// gateway's idempotency records and rate limit counters. Any policy but
// noeviction lets Redis drop them under memory pressure, which breaks the
// promises they keep (one order per clientOrderId, the tier's limits), so
// Err reports it and the callers refuse trading calls and report not
// ready. A Redis that does not answer is not judged here (its outage is
// answered as such); the last verdict stands until it answers again.
type RedisPolicy struct {
	client redis.UniversalClient
	log    *slog.Logger
	bad    atomic.Pointer[error]
}

// WatchRedisPolicy reads the policy now (bounded by 2 s) and then every
// RedisPolicyEvery until ctx ends.
func WatchRedisPolicy(ctx context.Context, client redis.UniversalClient, log *slog.Logger) *RedisPolicy {
	p := &RedisPolicy{client: client, log: log}
	p.refresh(ctx)
	repeat(ctx, RedisPolicyEvery, func() { p.refresh(ctx) })
	return p
}

// repeat runs f every d, in a goroutine of its own, until ctx ends.
func repeat(ctx context.Context, d time.Duration, f func()) {
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				f()
			}
		}
	}()
}

// Err is why the store cannot be trusted with records, or nil.
func (p *RedisPolicy) Err() error {
	if e := p.bad.Load(); e != nil {
		return *e
	}
	return nil
}

// Check is the readiness check of the Redis: it answers, and its policy
// keeps every key.
func (p *RedisPolicy) Check(ctx context.Context) error {
	if err := p.client.Ping(ctx).Err(); err != nil {
		return err
	}
	return p.Err()
}

func (p *RedisPolicy) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	answered, verdict := readPolicy(ctx, p.client)
	if !answered {
		return
	}
	var was error
	if e := p.bad.Swap(ptrOrNil(verdict)); e != nil {
		was = *e
	}
	switch {
	case verdict != nil && (was == nil || was.Error() != verdict.Error()):
		p.log.Error("redis may evict the gateway's records: trading calls are refused", "err", verdict)
	case verdict == nil && was != nil:
		p.log.Info("redis maxmemory-policy is noeviction again: trading calls are served")
	}
}

func ptrOrNil(err error) *error {
	if err == nil {
		return nil
	}
	return &err
}

// readPolicy returns whether Redis answered and, when it did, the verdict
// on its policy (nil: it keeps every key).
func readPolicy(ctx context.Context, client redis.UniversalClient) (bool, error) {
	res, err := client.ConfigGet(ctx, "maxmemory-policy").Result()
	var rerr redis.Error
	switch {
	case err != nil && errors.As(err, &rerr) && strings.HasPrefix(err.Error(), "NOPERM"):
		return true, errors.New("the gateway's Redis user may not read maxmemory-policy (CONFIG GET is denied by its ACL), " +
			"so it cannot tell whether Redis evicts its records; grant it +config|get and set maxmemory-policy noeviction")
	case err != nil && errors.As(err, &rerr):
		return true, fmt.Errorf("redis refused CONFIG GET maxmemory-policy (%v), so the gateway cannot tell whether it evicts its records; "+
			"allow the command and set maxmemory-policy noeviction", err)
	case err != nil:
		return false, nil
	}
	if policy := res["maxmemory-policy"]; policy != "noeviction" {
		return true, fmt.Errorf("redis maxmemory-policy is %q: under memory pressure it evicts idempotency records and rate limit counters; "+
			"set maxmemory-policy noeviction (and size maxmemory for 24 h of records)", policy)
	}
	return true, nil
}
