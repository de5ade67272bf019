package okx

import (
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
)

// rateWindow is the window OKX counts requests in (fact sheet §9: limits
// are per 2 seconds).
const rateWindow = 2 * time.Second

// rule is an endpoint's budget: n requests per rateWindow, counted per
// API key for private endpoints (OKX counts per UID) and per IP for public
// ones, and per instrument too where OKX says so (fact sheet §5, §9).
type rule struct {
	n      int
	byInst bool
}

// key names the budget a request draws on.
func (r rule) key(req request, k *keys) string {
	s := req.method + " " + req.path
	if k != nil && req.signed {
		s += " " + k.apiKey
	}
	if r.byInst {
		s += " " + req.instID
	}
	return s
}

// limiter keeps each budget's send times of the last window, so the
// connector waits for room instead of running into 50011, and remembers
// a rate-limit answer so nothing is sent on that budget until it ends.
type limiter struct {
	mu      sync.Mutex
	sent    map[string][]time.Time
	blocked map[string]time.Time
}

func newLimiter() *limiter {
	return &limiter{sent: map[string][]time.Time{}, blocked: map[string]time.Time{}}
}

// admit reserves a send on key at now. It returns how long to wait first
// (zero when there is room), or blocked > 0 when OKX rate-limited the key
// and nothing may be sent for that long. n <= 0 means no budget.
func (l *limiter) admit(now time.Time, key string, n int) (wait, blocked time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until, ok := l.blocked[key]; ok {
		if now.Before(until) {
			return 0, until.Sub(now)
		}
		delete(l.blocked, key)
	}
	if n <= 0 {
		return 0, 0
	}
	ts := l.sent[key]
	for len(ts) > 0 && !ts[0].Add(rateWindow).After(now) {
		ts = ts[1:]
	}
	at := now
	if len(ts) >= n {
		at = ts[len(ts)-n].Add(rateWindow)
	}
	l.sent[key] = append(ts, at)
	return at.Sub(now), 0
}

// block stops sends on key for d from now and returns d in whole seconds.
func (l *limiter) block(now time.Time, key string, d time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := now.Add(d); until.After(l.blocked[key]) {
		l.blocked[key] = until
	}
	return venuekit.Seconds(d)
}
