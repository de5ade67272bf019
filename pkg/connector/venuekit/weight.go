package venuekit

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WeightGate tracks one host's per-minute request-weight budget (Binance
// and the venues that copy its API: per IP, a weight limit a minute) from
// the used-weight header of each answer, so the connector slows down
// before the venue answers 429, and remembers a 429/418 so nothing is
// sent until the ban ends (sending on would escalate it). Times are the
// venue's clock.
type WeightGate struct {
	header string // the used-weight header: X-MBX-USED-WEIGHT-1M

	mu          sync.Mutex
	limit       int       // weight per minute
	used        int       // weight used in window, as the venue last reported plus what we sent since
	window      time.Time // start of the minute used counts in
	bannedUntil time.Time
}

// weightHeadroom is the share of the minute's budget used before waiting
// for the next minute.
const weightHeadroom = 0.9

// NewWeightGate is a budget of limit a minute read from header.
func NewWeightGate(header string, limit int) *WeightGate {
	return &WeightGate{header: header, limit: limit}
}

// SetLimit records the limit the venue announced (exchangeInfo).
func (g *WeightGate) SetLimit(n int) {
	if n <= 0 {
		return
	}
	g.mu.Lock()
	g.limit = n
	g.mu.Unlock()
}

// Limit is the weight a minute the gate allows.
func (g *WeightGate) Limit() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit
}

// Admit reserves weight at now. It returns how long to wait first (zero
// when there is room), or banned > 0 when the venue banned or throttled
// this host and nothing may be sent for that long. Weight 0 (order
// endpoints on Binance) is never held back by the budget.
func (g *WeightGate) Admit(now time.Time, weight int) (wait, banned time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Before(g.bannedUntil) {
		return 0, g.bannedUntil.Sub(now)
	}
	minute := now.Truncate(time.Minute)
	if minute.After(g.window) {
		g.window, g.used = minute, 0
	}
	if weight == 0 {
		return 0, 0
	}
	if float64(g.used+weight) > weightHeadroom*float64(g.limit) {
		// Wait for the next window and count the request there.
		next := minute.Add(time.Minute)
		g.window, g.used = next, weight
		return next.Sub(now), 0
	}
	g.used += weight
	return 0, 0
}

// Observe takes the venue's own count from an answer received at now; it
// is the truth for the current minute.
func (g *WeightGate) Observe(now time.Time, h http.Header) {
	n, err := strconv.Atoi(h.Get(g.header))
	if err != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if minute := now.Truncate(time.Minute); !minute.Before(g.window) {
		if minute.After(g.window) {
			g.window, g.used = minute, 0
		}
		g.used = max(g.used, n)
	}
}

// Ban stops all requests until until.
func (g *WeightGate) Ban(until time.Time) {
	g.mu.Lock()
	if until.After(g.bannedUntil) {
		g.bannedUntil = until
	}
	g.mu.Unlock()
}

// RetryAfter reads how long a Binance-style venue wants us to wait after
// a 429 or 418 answered at now: the Retry-After header when sent; for 418
// the "banned until <ms>" of the message; else the rest of the minute
// (429) or two minutes, the shortest ban (418).
func RetryAfter(now time.Time, status int, h http.Header, msg string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if status != http.StatusTeapot {
		return now.Truncate(time.Minute).Add(time.Minute).Sub(now)
	}
	if i := strings.Index(msg, "banned until "); i >= 0 {
		rest := msg[i+len("banned until "):]
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(rest)
		}
		if ms, err := strconv.ParseInt(rest[:end], 10, 64); err == nil {
			if d := time.UnixMilli(ms).Sub(now); d > 0 {
				return d
			}
		}
	}
	return 2 * time.Minute
}
