package appendlog

import (
	"context"
	"errors"
	"sync"
)

// Barrier gathers the durability waits that callees in the same process
// defer to their caller: a callee that has written a record but not yet
// made it durable hands the caller the wait (Defer) and answers at once,
// and the caller, which has a durable write of its own to make before it
// answers, waits for both at the same time (Wait). Two durable points in a
// row become one. A callee defers only when its caller's context carries a
// Barrier (WithBarrier); a caller must Wait before it reports anything the
// callees did.
type Barrier struct {
	mu    sync.Mutex
	waits []func() error
	done  chan struct{} // closed when the first Wait has run every wait
	err   error
	once  sync.Once
}

type barrierKey struct{}

// WithBarrier returns ctx carrying a new Barrier, and the Barrier.
func WithBarrier(ctx context.Context) (context.Context, *Barrier) {
	b := &Barrier{done: make(chan struct{})}
	return context.WithValue(ctx, barrierKey{}, b), b
}

// BarrierFrom returns the Barrier ctx carries, or nil.
func BarrierFrom(ctx context.Context) *Barrier {
	b, _ := ctx.Value(barrierKey{}).(*Barrier)
	return b
}

// Defer adds a wait that Wait runs.
func (b *Barrier) Defer(wait func() error) {
	b.mu.Lock()
	b.waits = append(b.waits, wait)
	b.mu.Unlock()
}

// Wait runs every deferred wait at once and returns their errors joined;
// later calls return the same result without running them again. A nil
// Barrier has nothing to wait for.
func (b *Barrier) Wait() error {
	if b == nil {
		return nil
	}
	b.once.Do(func() {
		b.mu.Lock()
		waits := b.waits
		b.mu.Unlock()
		b.err = runAll(waits...)
		close(b.done)
	})
	<-b.done
	return b.err
}

// runAll runs the waits concurrently and joins their errors.
func runAll(waits ...func() error) error {
	switch len(waits) {
	case 0:
		return nil
	case 1:
		return waits[0]()
	}
	errs := make([]error, len(waits))
	var wg sync.WaitGroup
	for i, w := range waits[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+1] = w()
		}()
	}
	errs[0] = waits[0]()
	wg.Wait()
	return errors.Join(errs...)
}

// Together runs the waits concurrently (nil ones are skipped) and joins
// their errors: a caller's own durable write and its Barrier, say.
func Together(waits ...func() error) error {
	var run []func() error
	for _, w := range waits {
		if w != nil {
			run = append(run, w)
		}
	}
	return runAll(run...)
}
