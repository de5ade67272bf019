// Package ratelimit counts requests per API key in two fixed windows, the
// UTC minute and the UTC day (SPEC §8, DESIGN §6). One check takes a slot
// in both windows only when both have room, so a denied request consumes
// nothing. Redis is exact across edge replicas; Memory serves one process
// (standalone). Both take an injected clock.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Limits is a key's quota: requests per UTC minute and per UTC day. Both
// must be positive.
type Limits struct{ PerMinute, PerDay int }

// Decision is the outcome of one Allow: whether the request may proceed
// and what the X-RateLimit-* headers report. Remaining counts include the
// request when it was allowed.
type Decision struct {
	Allowed         bool
	LimitMinute     int
	RemainingMinute int
	LimitDay        int
	RemainingDay    int
	// RetryAfter is zero when Allowed; when denied, the whole seconds
	// (at least 1) until the window that blocks resets: the next minute, or
	// the next UTC midnight when the day is used up.
	RetryAfter time.Duration
	// ResetMinute and ResetDay are how long until each window starts
	// afresh, in whole seconds (at least 1), for the RateLimit header.
	ResetMinute, ResetDay time.Duration
}

// Limiter decides whether a key may make one more request.
type Limiter interface {
	// Allow takes one request from key's minute and day windows when both
	// have room and reports the outcome. It fails on invalid limits or
	// when the counter store is unreachable; the caller decides whether to
	// fail open or closed.
	Allow(ctx context.Context, key string, l Limits) (Decision, error)
}

// ErrLimits means a Limits value is not positive in both windows.
var ErrLimits = errors.New("rate limits must be positive")

func (l Limits) check() error {
	if l.PerMinute <= 0 || l.PerDay <= 0 {
		return fmt.Errorf("%w, got %d per minute and %d per day", ErrLimits, l.PerMinute, l.PerDay)
	}
	return nil
}

// window is where now falls: the start of its UTC minute and UTC day, and
// when each ends.
type window struct {
	minute, day       time.Time
	minuteEnd, dayEnd time.Time
}

func windowAt(now time.Time) window {
	now = now.UTC()
	minute := now.Truncate(time.Minute)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return window{minute: minute, day: day, minuteEnd: minute.Add(time.Minute), dayEnd: day.AddDate(0, 0, 1)}
}

// decide builds the Decision from the counts after the check.
func decide(now time.Time, w window, l Limits, allowed bool, minuteCount, dayCount int) Decision {
	d := Decision{
		Allowed:         allowed,
		LimitMinute:     l.PerMinute,
		RemainingMinute: max(l.PerMinute-minuteCount, 0),
		LimitDay:        l.PerDay,
		RemainingDay:    max(l.PerDay-dayCount, 0),
		ResetMinute:     ceilSecond(w.minuteEnd.Sub(now)),
		ResetDay:        ceilSecond(w.dayEnd.Sub(now)),
	}
	if allowed {
		return d
	}
	var wait time.Duration
	if minuteCount >= l.PerMinute {
		wait = w.minuteEnd.Sub(now)
	}
	if dayCount >= l.PerDay {
		wait = max(wait, w.dayEnd.Sub(now))
	}
	d.RetryAfter = ceilSecond(wait)
	return d
}

// ceilSecond rounds d up to whole seconds, at least one.
func ceilSecond(d time.Duration) time.Duration {
	return max((d + time.Second - 1).Truncate(time.Second), time.Second)
}

func clock(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}
