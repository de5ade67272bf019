package connector

import (
	"context"
	"sync"
	"time"
)

// ServerClock estimates one venue host's clock from ours. Venues that
// reject signed requests outside a receive window (Binance, Bybit, OKX)
// need our timestamps on their clock, not the machine's.
type ServerClock struct {
	now func() time.Time

	mu     sync.Mutex
	offset time.Duration // the venue's clock minus ours
	synced time.Time     // local time of the last measurement; zero when never
}

// NewServerClock returns a clock with no offset yet; now nil means time.Now.
func NewServerClock(now func() time.Time) *ServerClock {
	if now == nil {
		now = time.Now
	}
	return &ServerClock{now: now}
}

// Now is the best estimate of the venue's current time.
func (c *ServerClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now().Add(c.offset)
}

// Fresh reports whether the offset was measured less than maxAge ago.
func (c *ServerClock) Fresh(maxAge time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.synced.IsZero() && c.now().Sub(c.synced) < maxAge
}

// Measure asks the venue its time with fetch and takes the midpoint of
// the round trip as the moment the venue read its clock.
func (c *ServerClock) Measure(ctx context.Context, fetch func(context.Context) (time.Time, error)) error {
	t0 := c.now()
	server, err := fetch(ctx)
	if err != nil {
		return err
	}
	t1 := c.now()
	mid := t0.Add(t1.Sub(t0) / 2)
	c.mu.Lock()
	c.offset, c.synced = server.Sub(mid), t1
	c.mu.Unlock()
	return nil
}

// Offset is the venue's clock minus ours, as last measured.
func (c *ServerClock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// SleepContext waits d or until ctx ends, whichever is first.
func SleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
