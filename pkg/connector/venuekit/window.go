package venuekit

import (
	"sync"
	"time"
)

// Windows keeps named request budgets of n sends per sliding window (a
// venue that counts requests per endpoint and key over a few seconds), so
// the connector waits for room instead of being refused, and remembers a
// rate-limit answer so nothing is sent on that budget until it ends.
type Windows struct {
	window  time.Duration
	mu      sync.Mutex
	sent    map[string][]time.Time
	blocked map[string]time.Time
}

// NewWindows counts sends per window.
func NewWindows(window time.Duration) *Windows {
	return &Windows{window: window, sent: map[string][]time.Time{}, blocked: map[string]time.Time{}}
}

// Admit reserves a send on key at now. It returns how long to wait first
// (zero when there is room), or blocked > 0 when the venue rate-limited
// the key and nothing may be sent for that long. n <= 0 means no budget.
func (l *Windows) Admit(now time.Time, key string, n int) (wait, blocked time.Duration) {
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
	for len(ts) > 0 && !ts[0].Add(l.window).After(now) {
		ts = ts[1:]
	}
	at := now
	if len(ts) >= n {
		at = ts[len(ts)-n].Add(l.window)
	}
	l.sent[key] = append(ts, at)
	return at.Sub(now), 0
}

// Block stops sends on key for d from now and returns d in whole seconds.
func (l *Windows) Block(now time.Time, key string, d time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := now.Add(d); until.After(l.blocked[key]) {
		l.blocked[key] = until
	}
	return Seconds(d)
}
