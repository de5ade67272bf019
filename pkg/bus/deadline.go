package bus

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// WithDeadline is context.WithDeadline(context.Background(), d) for a
// request a service answers, with its timer armed only once something
// waits on Done or derives a context from it. A read answered from memory
// never does, and the timer (allocated, added to the runtime's timer heap
// and removed again) was among the larger costs of such a request.
func WithDeadline(d time.Time) (context.Context, context.CancelFunc) {
	c := &lazyDeadline{deadline: d}
	return c, c.cancel
}

// lazyDeadline becomes a real deadline context (ctx) on first need; until
// then Err compares the clock with the deadline itself.
type lazyDeadline struct {
	deadline time.Time
	once     sync.Once
	armed    atomic.Bool
	ctx      context.Context
	stop     context.CancelFunc
}

// canceled is a context that has ended with context.Canceled.
var canceled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (c *lazyDeadline) real() context.Context {
	c.once.Do(func() {
		c.ctx, c.stop = context.WithDeadline(context.Background(), c.deadline)
		c.armed.Store(true)
	})
	return c.ctx
}

func (c *lazyDeadline) cancel() {
	c.once.Do(func() {
		c.ctx = canceled
		c.armed.Store(true)
	})
	if c.stop != nil {
		c.stop()
	}
}

// Deadline implements context.Context.
func (c *lazyDeadline) Deadline() (time.Time, bool) { return c.deadline, true }

// Done implements context.Context; it arms the timer.
func (c *lazyDeadline) Done() <-chan struct{} { return c.real().Done() }

// Err implements context.Context. Past the deadline it arms the context,
// which then ends at once, so that Done is closed whenever Err is not nil.
func (c *lazyDeadline) Err() error {
	if !c.armed.Load() && time.Now().Before(c.deadline) {
		return nil
	}
	return c.real().Err()
}

// Value implements context.Context: the context carries no values.
func (c *lazyDeadline) Value(any) any { return nil }

// AfterFunc lets contexts derived from c register with its real context
// (context.WithCancel looks for this method) instead of each starting a
// goroutine to watch Done.
func (c *lazyDeadline) AfterFunc(f func()) func() bool {
	return context.AfterFunc(c.real(), f)
}

func (c *lazyDeadline) String() string {
	return "bus.WithDeadline(" + c.deadline.String() + ")"
}
