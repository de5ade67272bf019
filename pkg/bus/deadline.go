package bus

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// WithDeadline is context.WithDeadline(parent, d) for a request a service
// answers, with its timer armed only once something waits on Done or
// derives a cancelable context from it. A read answered from memory never
// does, and the timer (allocated, added to the runtime's timer heap and
// removed again), with the parent's bookkeeping of its children, was among
// the larger costs of such a request. Until armed, Err asks the clock and
// the parent.
func WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	if pd, ok := parent.Deadline(); ok && pd.Before(d) {
		d = pd
	}
	c := &lazyDeadline{parent: parent, deadline: d}
	return c, c.cancel
}

// lazyDeadline becomes a real deadline context (ctx) on first need.
type lazyDeadline struct {
	parent   context.Context
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
		c.ctx, c.stop = context.WithDeadline(c.parent, c.deadline)
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

// Err implements context.Context. Past the deadline, or once the parent
// has ended, it arms the context, which then ends at once, so that Done is
// closed whenever Err is not nil.
func (c *lazyDeadline) Err() error {
	if !c.armed.Load() && time.Now().Before(c.deadline) && c.parent.Err() == nil {
		return nil
	}
	return c.real().Err()
}

// Value implements context.Context: the parent's values.
func (c *lazyDeadline) Value(key any) any { return c.parent.Value(key) }

// AfterFunc lets contexts derived from c register with its real context
// (context.WithCancel looks for this method) instead of each starting a
// goroutine to watch Done.
func (c *lazyDeadline) AfterFunc(f func()) func() bool {
	return context.AfterFunc(c.real(), f)
}

func (c *lazyDeadline) String() string {
	return "bus.WithDeadline(" + c.deadline.String() + ")"
}
