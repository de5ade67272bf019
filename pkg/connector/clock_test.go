package connector

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestServerClockTakesRoundTripMidpoint(t *testing.T) {
	local := time.UnixMilli(1_000_000)
	c := NewServerClock(func() time.Time { return local })
	if c.Fresh(time.Minute) {
		t.Fatal("a clock never measured is not fresh")
	}
	err := c.Measure(context.Background(), func(context.Context) (time.Time, error) {
		local = local.Add(200 * time.Millisecond) // the round trip takes 200 ms
		return time.UnixMilli(1_000_000 + 100 + 3_000), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Offset(); got != 3*time.Second {
		t.Fatalf("offset %v, want 3s (server read at the midpoint)", got)
	}
	if got := c.Now().UnixMilli(); got != 1_000_000+200+3_000 {
		t.Fatalf("Now %d", got)
	}
	if !c.Fresh(time.Minute) {
		t.Fatal("just measured, not fresh")
	}
	local = local.Add(2 * time.Minute)
	if c.Fresh(time.Minute) {
		t.Fatal("fresh after two minutes with maxAge one")
	}
}

func TestServerClockKeepsOffsetWhenMeasureFails(t *testing.T) {
	c := NewServerClock(nil)
	_ = c.Measure(context.Background(), func(context.Context) (time.Time, error) { return time.Now().Add(time.Hour), nil })
	want := errors.New("down")
	if err := c.Measure(context.Background(), func(context.Context) (time.Time, error) { return time.Time{}, want }); !errors.Is(err, want) {
		t.Fatalf("err %v", err)
	}
	if c.Offset() < 59*time.Minute {
		t.Fatalf("offset lost: %v", c.Offset())
	}
}

func TestSleepContextEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := SleepContext(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}
