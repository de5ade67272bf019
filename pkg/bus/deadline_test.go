package bus

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestWithDeadlineEndsAtItsDeadline(t *testing.T) {
	ctx, cancel := WithDeadline(context.Background(), time.Now().Add(30*time.Millisecond))
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || time.Until(d) <= 0 {
		t.Fatalf("Deadline() = %v, %v", d, ok)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("Err before the deadline: %v", err)
	}
	select {
	case <-ctx.Done():
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err after Done: %v", ctx.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed 5 s after a 30 ms deadline")
	}
}

// Nobody waited on Done: past the deadline Err says so and Done is
// closed as well, as for any context.
func TestWithDeadlineUnarmedPastDeadline(t *testing.T) {
	ctx, cancel := WithDeadline(context.Background(), time.Now().Add(10*time.Millisecond))
	defer cancel()
	if ctx.Err() != nil {
		t.Fatal("ended early")
	}
	time.Sleep(20 * time.Millisecond)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err past the deadline: %v", ctx.Err())
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Err is set but Done is open")
	}
}

func TestWithDeadlineCancel(t *testing.T) {
	for _, armFirst := range []bool{false, true} {
		ctx, cancel := WithDeadline(context.Background(), time.Now().Add(time.Hour))
		if armFirst {
			_ = ctx.Done()
		}
		child, stop := context.WithCancel(context.WithValue(ctx, struct{}{}, 1))
		cancel()
		cancel() // twice is harmless
		for name, c := range map[string]context.Context{"ctx": ctx, "derived": child} {
			select {
			case <-c.Done():
			case <-time.After(5 * time.Second):
				t.Fatalf("armed first %v: %s not done after cancel", armFirst, name)
			}
			if !errors.Is(c.Err(), context.Canceled) {
				t.Fatalf("armed first %v: %s Err = %v", armFirst, name, c.Err())
			}
		}
		stop()
	}
}

// Contexts derived from it neither arm it when only reading values nor
// start a goroutine each when they watch it.
func TestWithDeadlineDerived(t *testing.T) {
	ctx, cancel := WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	type key struct{}
	if v := context.WithValue(ctx, key{}, "v").Value(key{}); v != "v" {
		t.Fatalf("value %v", v)
	}
	if ctx.(*lazyDeadline).armed.Load() {
		t.Fatal("a value lookup armed the timer")
	}
	before := runtime.NumGoroutine()
	var stops []context.CancelFunc
	for range 100 {
		_, stop := context.WithCancel(ctx)
		stops = append(stops, stop)
	}
	if n := runtime.NumGoroutine() - before; n > 10 {
		t.Fatalf("100 derived contexts started %d goroutines", n)
	}
	for _, stop := range stops {
		stop()
	}
	short, cancelShort := WithDeadline(context.Background(), time.Now().Add(20*time.Millisecond))
	defer cancelShort()
	child, stop := context.WithTimeout(short, time.Hour)
	defer stop()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a derived context outlived its parent's deadline")
	}
}

func TestWithDeadlineConcurrent(t *testing.T) {
	for range 200 {
		ctx, cancel := WithDeadline(context.Background(), time.Now().Add(time.Millisecond))
		var wg sync.WaitGroup
		wg.Go(func() { <-ctx.Done() })
		wg.Go(func() { _ = ctx.Err() })
		wg.Go(cancel)
		wg.Wait()
		if ctx.Err() == nil {
			t.Fatal("Err nil after Done and cancel")
		}
	}
}

// A request's context at the edge derives from the HTTP request's: its
// values are there, an earlier deadline of the parent wins, and a parent
// that ends (the client hung up) ends it, armed or not.
func TestWithDeadlineParent(t *testing.T) {
	type key struct{}
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	ctx, cancel := WithDeadline(parent, time.Now().Add(time.Hour))
	defer cancel()
	if v := ctx.Value(key{}); v != "v" {
		t.Fatalf("parent's value = %v", v)
	}
	if ctx.Err() != nil || ctx.(*lazyDeadline).armed.Load() {
		t.Fatal("ended or armed before anything happened")
	}
	cancelParent()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err after the parent ended = %v", ctx.Err())
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Err is set but Done is open")
	}

	soon := time.Now().Add(20 * time.Millisecond)
	short, stop := context.WithDeadline(context.Background(), soon)
	defer stop()
	ctx, cancel = WithDeadline(short, time.Now().Add(time.Hour))
	defer cancel()
	if d, _ := ctx.Deadline(); !d.Equal(soon) {
		t.Fatalf("Deadline() = %v, want the parent's %v", d, soon)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not done 5 s after the parent's 20 ms deadline")
	}
}
