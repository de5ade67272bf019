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
