package ratelimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/testenv"
)

func TestMemory(t *testing.T) {
	testLimiter(t, func(t *testing.T, now func() time.Time) ratelimit.Limiter {
		return ratelimit.NewMemory(now)
	})
}

func TestMemoryDropsPastDays(t *testing.T) {
	clk := testenv.NewClock(at(t, "2025-03-09T23:58:00Z"))
	l := ratelimit.NewMemory(clk.Now)
	lim := ratelimit.Limits{PerMinute: 10, PerDay: 100}
	allow := func(key string) {
		t.Helper()
		if _, err := l.Allow(context.Background(), key, lim); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		allow(fmt.Sprint("old-", i))
	}
	clk.Set(at(t, "2025-03-09T23:59:00Z"))
	allow("today")
	if n := l.Len(); n != 101 {
		t.Fatalf("Len = %d the same day, want 101", n)
	}
	clk.Set(at(t, "2025-03-10T00:00:00Z"))
	allow("tomorrow")
	if n := l.Len(); n != 1 {
		t.Fatalf("Len = %d after midnight, want 1: yesterday's keys must go", n)
	}
}

func TestMemoryCanceledContext(t *testing.T) {
	l := ratelimit.NewMemory(nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Allow(ctx, "k", ratelimit.Limits{PerMinute: 1, PerDay: 1}); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
