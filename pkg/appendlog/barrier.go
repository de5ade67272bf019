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
	// A held write (Hold): a caller's record not yet durable that a callee
	// may record in its own log instead (Take); note then records the
	// caller's later ones there too.
	mayHold  bool
	held     []byte
	heldWait func() error
	taken    bool
	note     func([]byte) (func() error, error)
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

// AllowHold lets callers of b Hold their writes: the caller that made b
// knows its callee records held writes (Take) before anything outside the
// process can act on the request.
func (b *Barrier) AllowHold() {
	b.mu.Lock()
	b.mayHold = true
	b.mu.Unlock()
}

// Hold records that data (a log line) was written but is not durable, and
// that wait makes it so, when b allows it (AllowHold; nil b does not): a
// callee may then record data in its own log, durable with its own record
// (Take), and nobody waits for wait. Hold reports whether it held; if not,
// the caller must wait itself.
func (b *Barrier) Hold(data []byte, wait func() error) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.mayHold || b.heldWait != nil {
		return false
	}
	b.held, b.heldWait = data, wait
	return true
}

// Take hands a callee the held write, once (nil when there is none): the
// callee must record it in the same durable record as its own change, so
// that neither survives a crash without the other. note records the
// caller's later lines in the callee's log and returns the wait that makes
// them durable (Note).
func (b *Barrier) Take(note func([]byte) (func() error, error)) []byte {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.heldWait == nil || b.taken {
		return nil
	}
	b.taken, b.note = true, note
	return b.held
}

// Taken reports whether a callee took the held write.
func (b *Barrier) Taken() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.taken
}

// WaitHeld waits until the held write is durable in the caller's own log:
// when no callee took it, or when the request failed and the caller's
// record must stand on its own.
func (b *Barrier) WaitHeld() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	w := b.heldWait
	b.mu.Unlock()
	if w == nil {
		return nil
	}
	return w()
}

// Note records data in the log of the callee that took the held write and
// defers the wait that makes it durable to b. It fails when no callee took
// it; the caller then makes data durable itself.
func (b *Barrier) Note(data []byte) error {
	b.mu.Lock()
	note := b.note
	b.mu.Unlock()
	if note == nil {
		return errors.New("appendlog: no callee took the held write")
	}
	wait, err := note(data)
	if err != nil {
		return err
	}
	b.Defer(wait)
	return nil
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
