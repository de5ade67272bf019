package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// newLimiter makes a fresh limiter with empty counters reading time from now.
type newLimiter func(t *testing.T, now func() time.Time) ratelimit.Limiter

func at(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// step makes n requests for key at a time and expects each to decide want,
// except that the remaining counts of allowed requests go down by one per
// request from want's values.
type step struct {
	at   string
	key  string // "" means "k"
	n    int    // 0 means 1
	want ratelimit.Decision
}

func allowed(l ratelimit.Limits, remMin, remDay int) ratelimit.Decision {
	return ratelimit.Decision{Allowed: true, LimitMinute: l.PerMinute, RemainingMinute: remMin, LimitDay: l.PerDay, RemainingDay: remDay}
}

func denied(l ratelimit.Limits, remMin, remDay int, retry time.Duration) ratelimit.Decision {
	return ratelimit.Decision{LimitMinute: l.PerMinute, RemainingMinute: remMin, LimitDay: l.PerDay, RemainingDay: remDay, RetryAfter: retry}
}

// resets is how long until the next minute and the next UTC day begin at
// now, rounded up to whole seconds as the headers carry them.
func resets(now time.Time) (minute, day time.Duration) {
	ceil := func(d time.Duration) time.Duration { return (d + time.Second - 1) / time.Second * time.Second }
	u := now.UTC()
	nextDay := time.Date(u.Year(), u.Month(), u.Day()+1, 0, 0, 0, 0, time.UTC)
	return ceil(u.Truncate(time.Minute).Add(time.Minute).Sub(u)), ceil(nextDay.Sub(u))
}

func TestResets(t *testing.T) {
	m, d := resets(time.Date(2025, 3, 9, 12, 0, 10, 250e6, time.UTC))
	if m != 50*time.Second || d != 11*time.Hour+59*time.Minute+50*time.Second {
		t.Fatalf("resets at 12:00:10.250 = %v, %v; want 50s, 11h59m50s", m, d)
	}
}

// testLimiter is the suite every Limiter must pass.
func testLimiter(t *testing.T, newLimiter newLimiter) {
	small := ratelimit.Limits{PerMinute: 3, PerDay: 100}
	daily := ratelimit.Limits{PerMinute: 100, PerDay: 3}
	both := ratelimit.Limits{PerMinute: 2, PerDay: 2}
	plus5 := time.FixedZone("UTC+5", 5*3600)
	tests := []struct {
		name   string
		limits ratelimit.Limits
		zone   *time.Location // clock's location; nil means UTC
		steps  []step
	}{
		{name: "per-minute limit exact", limits: small, steps: []step{
			{at: "2025-03-09T12:00:10.250Z", n: 3, want: allowed(small, 2, 99)},
			{at: "2025-03-09T12:00:10.250Z", want: denied(small, 0, 97, 50*time.Second)},
			{at: "2025-03-09T12:00:59Z", want: denied(small, 0, 97, time.Second)},
		}},
		{name: "per-day limit exact", limits: daily, steps: []step{
			{at: "2025-03-09T08:00:00Z", n: 3, want: allowed(daily, 99, 2)},
			{at: "2025-03-09T08:00:00Z", want: denied(daily, 97, 0, 16*time.Hour)},
			{at: "2025-03-09T20:30:00.001Z", want: denied(daily, 100, 0, 3*time.Hour+30*time.Minute)},
		}},
		{name: "minute rollover", limits: small, steps: []step{
			{at: "2025-03-09T12:00:59.500Z", n: 3, want: allowed(small, 2, 99)},
			{at: "2025-03-09T12:00:59.999Z", want: denied(small, 0, 97, time.Second)},
			{at: "2025-03-09T12:01:00Z", n: 3, want: allowed(small, 2, 96)},
			{at: "2025-03-09T12:01:30Z", want: denied(small, 0, 94, 30*time.Second)},
		}},
		{name: "day rollover at UTC midnight", limits: daily, steps: []step{
			{at: "2025-03-09T23:59:30Z", n: 3, want: allowed(daily, 99, 2)},
			{at: "2025-03-09T23:59:59.100Z", want: denied(daily, 97, 0, time.Second)},
			{at: "2025-03-10T00:00:00Z", want: allowed(daily, 99, 2)},
		}},
		{name: "day rollover at UTC midnight, not local midnight", limits: daily, zone: plus5, steps: []step{
			{at: "2025-03-09T04:59:30+05:00", n: 3, want: allowed(daily, 99, 2)},
			{at: "2025-03-09T04:59:30+05:00", want: denied(daily, 97, 0, 30*time.Second)},
			{at: "2025-03-09T05:00:00+05:00", want: allowed(daily, 99, 2)},
		}},
		{name: "month and year rollover", limits: daily, steps: []step{
			{at: "2025-12-31T23:59:59Z", n: 3, want: allowed(daily, 99, 2)},
			{at: "2026-01-01T00:00:00Z", want: allowed(daily, 99, 2)},
		}},
		{name: "denied requests do not consume the day", limits: small, steps: []step{
			{at: "2025-03-09T12:00:00Z", n: 3, want: allowed(small, 2, 99)},
			{at: "2025-03-09T12:00:01Z", n: 10, want: denied(small, 0, 97, 59*time.Second)},
			{at: "2025-03-09T12:01:00Z", want: allowed(small, 2, 96)},
		}},
		{name: "denied requests do not consume the minute", limits: daily, steps: []step{
			{at: "2025-03-09T12:00:00Z", n: 3, want: allowed(daily, 99, 2)},
			{at: "2025-03-09T12:00:01Z", n: 10, want: denied(daily, 97, 0, 12*time.Hour-time.Second)},
		}},
		{name: "both exhausted waits for the day", limits: both, steps: []step{
			{at: "2025-03-09T23:00:00Z", n: 2, want: allowed(both, 1, 1)},
			{at: "2025-03-09T23:00:00Z", want: denied(both, 0, 0, time.Hour)},
		}},
		{name: "keys are independent", limits: small, steps: []step{
			{at: "2025-03-09T12:00:00Z", key: "a", n: 3, want: allowed(small, 2, 99)},
			{at: "2025-03-09T12:00:00Z", key: "a", want: denied(small, 0, 97, time.Minute)},
			{at: "2025-03-09T12:00:00Z", key: "b", want: allowed(small, 2, 99)},
		}},
		{name: "retry after rounds up", limits: small, steps: []step{
			{at: "2025-03-09T12:00:00.001Z", n: 3, want: allowed(small, 2, 99)},
			{at: "2025-03-09T12:00:00.001Z", want: denied(small, 0, 97, time.Minute)},
			{at: "2025-03-09T12:00:58.999999999Z", want: denied(small, 0, 97, 2*time.Second)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testenv.NewClock(time.Time{})
			l := newLimiter(t, clk.Now)
			loc := tt.zone
			if loc == nil {
				loc = time.UTC
			}
			for i, s := range tt.steps {
				clk.Set(at(t, s.at).In(loc))
				key := s.key
				if key == "" {
					key = "k"
				}
				for j := range max(s.n, 1) {
					want := s.want
					if want.Allowed {
						want.RemainingMinute -= j
						want.RemainingDay -= j
					}
					want.ResetMinute, want.ResetDay = resets(clk.Now())
					got, err := l.Allow(context.Background(), key, tt.limits)
					if err != nil {
						t.Fatalf("step %d request %d: %v", i, j, err)
					}
					if got != want {
						t.Fatalf("step %d request %d at %s:\n got %+v\nwant %+v", i, j, s.at, got, want)
					}
				}
			}
		})
	}

	t.Run("invalid limits", func(t *testing.T) {
		l := newLimiter(t, nil)
		for _, lim := range []ratelimit.Limits{{0, 5}, {5, 0}, {-1, 5}, {}} {
			_, err := l.Allow(context.Background(), "k", lim)
			if !errors.Is(err, ratelimit.ErrLimits) {
				t.Fatalf("Allow(%+v) error %v, want ErrLimits", lim, err)
			}
			want := fmt.Sprintf("rate limits must be positive, got %d per minute and %d per day", lim.PerMinute, lim.PerDay)
			if err.Error() != want {
				t.Fatalf("message %q, want %q", err, want)
			}
		}
	})

	t.Run("real clock", func(t *testing.T) {
		l := newLimiter(t, nil)
		lim := ratelimit.Limits{PerMinute: 1, PerDay: 10}
		if d, err := l.Allow(context.Background(), "k", lim); err != nil || !d.Allowed {
			t.Fatalf("first request: %+v, %v", d, err)
		}
		d, err := l.Allow(context.Background(), "k", lim)
		if err != nil {
			t.Fatal(err)
		}
		// The two calls may straddle a minute boundary; then both pass.
		if !d.Allowed && (d.RetryAfter < time.Second || d.RetryAfter > time.Minute) {
			t.Fatalf("RetryAfter %v outside [1s, 60s]", d.RetryAfter)
		}
	})

	t.Run("concurrent requests are exact", func(t *testing.T) {
		clk := testenv.NewClock(at(t, "2025-03-09T12:00:00Z"))
		l := newLimiter(t, clk.Now)
		lim := ratelimit.Limits{PerMinute: 30, PerDay: 5000}
		ok, no := hammer(t, 200, lim, l)
		if ok != 30 || no != 170 {
			t.Fatalf("allowed %d, denied %d; want 30 and 170", ok, no)
		}
		d, err := l.Allow(context.Background(), "k", lim)
		if err != nil {
			t.Fatal(err)
		}
		want := denied(lim, 0, 4970, time.Minute)
		want.ResetMinute, want.ResetDay = time.Minute, 12*time.Hour
		if d != want {
			t.Fatalf("after the burst: %+v, want %+v", d, want)
		}
	})
}

// hammer sends n concurrent requests for key "k" spread round-robin over
// limiters and counts the outcomes.
func hammer(t *testing.T, n int, lim ratelimit.Limits, limiters ...ratelimit.Limiter) (ok, no int64) {
	t.Helper()
	var wg sync.WaitGroup
	var okN, noN atomic.Int64
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, err := limiters[i%len(limiters)].Allow(context.Background(), "k", lim)
			switch {
			case err != nil:
				errs <- err
			case d.Allowed:
				okN.Add(1)
			default:
				noN.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return okN.Load(), noN.Load()
}
