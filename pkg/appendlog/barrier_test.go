package appendlog

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestBarrierWaitsForAllAtOnce: Wait runs every deferred wait, at the
// same time, once; a second Wait returns the same result.
func TestBarrierWaitsForAllAtOnce(t *testing.T) {
	ctx, b := WithBarrier(context.Background())
	if BarrierFrom(ctx) != b || BarrierFrom(context.Background()) != nil {
		t.Fatal("BarrierFrom does not find the barrier")
	}
	var runs atomic.Int32
	release := make(chan struct{})
	bad := errors.New("fsync failed")
	for i := range 3 {
		b.Defer(func() error {
			runs.Add(1)
			<-release // each waits for the others: only concurrent runs finish
			if i == 2 {
				return bad
			}
			return nil
		})
	}
	go func() {
		for runs.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		close(release)
	}()
	if err := b.Wait(); !errors.Is(err, bad) {
		t.Fatalf("Wait = %v, want %v", err, bad)
	}
	if err := b.Wait(); !errors.Is(err, bad) || runs.Load() != 3 {
		t.Fatalf("second Wait = %v after %d runs, want the same error and no new run", err, runs.Load())
	}
	var none *Barrier
	if err := none.Wait(); err != nil {
		t.Fatalf("nil barrier: %v", err)
	}
}

// TestBarrierHold: a write is held only with leave (AllowHold), once; a
// callee takes it once, and the caller's notes then go through the
// callee's writer into the barrier's waits. Without a taker the caller
// waits for its own write (WaitHeld) and Note fails.
func TestBarrierHold(t *testing.T) {
	_, b := WithBarrier(context.Background())
	var own atomic.Int32
	wait := func() error { own.Add(1); return nil }
	if b.Hold([]byte("claim"), wait) || (*Barrier)(nil).Hold([]byte("claim"), wait) {
		t.Fatal("held without leave")
	}
	if err := b.Note([]byte("result")); err == nil {
		t.Fatal("a note went nowhere without a taker")
	}
	if err := b.WaitHeld(); err != nil || own.Load() != 0 {
		t.Fatalf("WaitHeld with nothing held: %v, %d waits", err, own.Load())
	}

	_, b = WithBarrier(context.Background())
	b.AllowHold()
	if !b.Hold([]byte("claim"), wait) || b.Hold([]byte("other"), wait) {
		t.Fatal("Hold: want the first write held, not a second")
	}
	var noted [][]byte
	var noteWaits atomic.Int32
	note := func(line []byte) (func() error, error) {
		noted = append(noted, line)
		return func() error { noteWaits.Add(1); return nil }, nil
	}
	if got := b.Take(note); string(got) != "claim" || !b.Taken() {
		t.Fatalf("Take = %q, taken %v", got, b.Taken())
	}
	if got := b.Take(note); got != nil {
		t.Fatalf("taken twice: %q", got)
	}
	if err := b.Note([]byte("result")); err != nil || len(noted) != 1 || string(noted[0]) != "result" {
		t.Fatalf("Note: %v, noted %q", err, noted)
	}
	if err := b.Wait(); err != nil || noteWaits.Load() != 1 || own.Load() != 0 {
		t.Fatalf("Wait: %v; note waits %d, own waits %d; want the note's only", err, noteWaits.Load(), own.Load())
	}
	if err := b.WaitHeld(); err != nil || own.Load() != 1 {
		t.Fatalf("WaitHeld: %v after %d own waits", err, own.Load())
	}
}
