package venuekit

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
)

// Seconds is d in whole seconds, rounded up: a retryAfter.
func Seconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// Pace waits d (when positive) before a send with wait. A wait that would
// pass ctx's deadline is answered at once as UPSTREAM_RATE_LIMITED; its
// message is format with args and the seconds to wait last.
func Pace(ctx context.Context, now time.Time, d time.Duration, wait func(context.Context, time.Duration) error, format string, args ...any) error {
	if d <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && now.Add(d).After(dl) {
		s := Seconds(d)
		return connector.RateLimited("", "", s, format, append(args, s)...)
	}
	return wait(ctx, d)
}

// Ban is an IP back-off: after the venue blocked us, nothing is sent
// until it ends (sending on would lengthen it).
type Ban struct {
	mu    sync.Mutex
	until time.Time
}

// Until bans sends before t (a ban only ever grows).
func (b *Ban) Until(t time.Time) {
	b.mu.Lock()
	if t.After(b.until) {
		b.until = t
	}
	b.mu.Unlock()
}

// Left is how long the ban still runs at now; zero when none.
func (b *Ban) Left(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.until) {
		return b.until.Sub(now)
	}
	return 0
}

// resetMargin is how long after an announced reset the next request goes:
// resets are in whole milliseconds, so a little past it lands the request
// in the new window.
const resetMargin = 20 * time.Millisecond

// Quotas are per-endpoint budgets as the venue's answers last stated them:
// requests remaining and when the window resets. Keys are the caller's
// (host, account, endpoint or limit class).
type Quotas struct {
	mu sync.Mutex
	m  map[string]quota
}

type quota struct {
	remaining int
	reset     time.Time
}

// Observe takes a budget from two headers of an answer: requests
// remaining, and the reset as a Unix time in seconds, or in milliseconds
// when that large. Answers without them change nothing.
func (q *Quotas) Observe(key string, hdr http.Header, remaining, reset string) {
	rem, err1 := strconv.Atoi(hdr.Get(remaining))
	at, err2 := strconv.ParseInt(hdr.Get(reset), 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	t := time.Unix(at, 0)
	if at > 1e12 {
		t = time.UnixMilli(at)
	}
	q.Set(key, rem, t)
}

// Set records key's budget.
func (q *Quotas) Set(key string, remaining int, reset time.Time) {
	q.mu.Lock()
	if q.m == nil {
		q.m = map[string]quota{}
	}
	q.m[key] = quota{remaining: remaining, reset: reset}
	q.mu.Unlock()
}

// Wait is how long to wait at now before a send on key: until just after
// the reset when the venue said the budget is used up, else zero.
func (q *Quotas) Wait(key string, now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	b, ok := q.m[key]
	if !ok || b.remaining > 0 {
		return 0
	}
	return b.reset.Sub(now) + resetMargin
}

// Reset is how long at now until key's window resets; zero when unknown
// or past.
func (q *Quotas) Reset(key string, now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return max(q.m[key].reset.Sub(now), 0)
}

// Spent marks key's budget used up (the venue refused for it) and returns
// how long until its reset, zero when unknown.
func (q *Quotas) Spent(key string, now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	b, ok := q.m[key]
	if !ok {
		return 0
	}
	b.remaining = 0
	q.m[key] = b
	return max(b.reset.Sub(now), 0)
}
