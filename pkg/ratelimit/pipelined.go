package ratelimit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pipelined is a Redis limiter whose concurrent calls share round trips.
// A call that finds Redis idle sends its script at once, on its own
// goroutine; the calls that arrive while a batch is in flight wait, and
// go as the next batch in one pipeline, led by the first of them. Under
// load one write and one read then carry many requests, at the edge and
// at Redis, and a lone request pays nothing extra. Every call still runs
// allowScript, so counting is as exact as with Redis.
type Pipelined struct {
	redis *Redis

	mu      sync.Mutex
	busy    bool    // a batch is in flight
	waiting []*call // arrived while it was
}

var _ Limiter = (*Pipelined)(nil)

// NewPipelined batches r's calls.
func NewPipelined(r *Redis) *Pipelined { return &Pipelined{redis: r} }

// maxBatch bounds one pipeline; the rest waits for the next.
const maxBatch = 256

// batchTimeout bounds a batch whose callers set no deadline.
const batchTimeout = 5 * time.Second

type call struct {
	ctx context.Context
	key string
	lim Limits
	dec Decision
	err error
	// wake receives nil once the call's result is in, or the batch it is
	// to lead. Buffered, so the leader never waits on a caller.
	wake chan []*call
}

// Allow implements Limiter.
func (p *Pipelined) Allow(ctx context.Context, key string, lim Limits) (Decision, error) {
	if err := lim.check(); err != nil {
		return Decision{}, err
	}
	c := &call{ctx: ctx, key: key, lim: lim}
	p.mu.Lock()
	if !p.busy {
		p.busy = true
		p.mu.Unlock()
		p.lead([]*call{c})
		return c.dec, c.err
	}
	c.wake = make(chan []*call, 1)
	p.waiting = append(p.waiting, c)
	p.mu.Unlock()
	select {
	case batch := <-c.wake:
		if batch != nil {
			p.lead(batch)
		}
		return c.dec, c.err
	case <-ctx.Done():
	}
	p.mu.Lock()
	if i := slices.Index(p.waiting, c); i >= 0 {
		p.waiting = slices.Delete(p.waiting, i, i+1)
		p.mu.Unlock()
		return Decision{}, fmt.Errorf("rate limit: %w", ctx.Err())
	}
	p.mu.Unlock()
	// Already part of a batch: its result or its lead is on the way, and
	// the others in it depend on that lead being taken.
	if batch := <-c.wake; batch != nil {
		p.lead(batch)
	}
	return c.dec, c.err
}

// lead runs batch (whose first call is the caller's own), answers it, and
// hands whatever arrived meanwhile to the first of those calls.
func (p *Pipelined) lead(batch []*call) {
	p.run(batch)
	p.mu.Lock()
	n := min(len(p.waiting), maxBatch)
	next := slices.Clone(p.waiting[:n])
	p.waiting = slices.Delete(p.waiting, 0, n)
	p.busy = n > 0
	p.mu.Unlock()
	for _, c := range batch[1:] {
		c.wake <- nil
	}
	if n > 0 {
		next[0].wake <- next
	}
}

// run sends every call of batch whose caller still waits in one pipeline
// and fills in each result.
func (p *Pipelined) run(batch []*call) {
	l := p.redis
	now := l.now()
	w := windowAt(now)
	ctx, cancel := batchContext(batch)
	defer cancel()
	pipe := l.client.Pipeline()
	cmds := make([]*redis.Cmd, len(batch))
	for i, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = fmt.Errorf("rate limit: %w", err)
			continue
		}
		keys, args := l.script(now, w, c.key, c.lim)
		cmds[i] = allowScript.EvalSha(ctx, pipe, keys, args...)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own error
	for i, c := range batch {
		if cmds[i] == nil {
			continue
		}
		res, err := cmds[i].Int64Slice()
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			// Redis lost its scripts (a restart): Run loads it again.
			keys, args := l.script(now, w, c.key, c.lim)
			res, err = allowScript.Run(ctx, l.client, keys, args...).Int64Slice()
		}
		c.dec, c.err = decideScript(now, w, c.lim, res, err)
	}
}

// batchContext lasts as long as the latest deadline in batch: no caller's
// cancellation cuts the others off.
func batchContext(batch []*call) (context.Context, context.CancelFunc) {
	deadline := time.Time{}
	for _, c := range batch {
		d, ok := c.ctx.Deadline()
		if !ok {
			d = time.Now().Add(batchTimeout)
		}
		if d.After(deadline) {
			deadline = d
		}
	}
	return context.WithDeadline(context.WithoutCancel(batch[0].ctx), deadline)
}
