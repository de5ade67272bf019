package aster

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// weightGate tracks one Aster host's request-weight budget (fact sheet
// §10: per IP, 2400 a minute unless exchangeInfo says otherwise) from the
// X-MBX-USED-WEIGHT-1M header, so the connector slows down before Aster
// answers 429, and remembers a 429/418 so no request is sent until the
// ban ends (sending on would escalate it).
type weightGate struct {
	mu          sync.Mutex
	limit       int       // weight per minute
	used        int       // weight used in window, as Aster last reported plus what we sent since
	window      time.Time // start of the minute used counts in (server time)
	bannedUntil time.Time // server time before which nothing is sent
}

// headroom is the share of the minute's budget the connector uses before it
// waits for the next minute.
const headroom = 0.9

const defaultWeightLimit = 2400

func newWeightGate() *weightGate { return &weightGate{limit: defaultWeightLimit} }

// setLimit records the REQUEST_WEIGHT limit exchangeInfo announced.
func (g *weightGate) setLimit(n int) {
	if n <= 0 {
		return
	}
	g.mu.Lock()
	g.limit = n
	g.mu.Unlock()
}

// admit reserves weight at server time now. It returns how long to wait
// first (zero when there is room), or banned > 0 when Aster has banned
// or throttled this host and nothing may be sent for that long.
func (g *weightGate) admit(now time.Time, weight int) (wait, banned time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Before(g.bannedUntil) {
		return 0, g.bannedUntil.Sub(now)
	}
	minute := now.Truncate(time.Minute)
	if minute.After(g.window) {
		g.window, g.used = minute, 0
	}
	if weight == 0 { // order endpoints cost no IP weight (fact sheet §10)
		return 0, 0
	}
	if float64(g.used+weight) > headroom*float64(g.limit) {
		// Wait for the next window and count the request there.
		next := minute.Add(time.Minute)
		g.window, g.used = next, weight
		return next.Sub(now), 0
	}
	g.used += weight
	return 0, 0
}

// observe takes Aster's own count from a response received at server
// time now; it is the truth for the current minute.
func (g *weightGate) observe(now time.Time, h http.Header) {
	v := h.Get("X-MBX-USED-WEIGHT-1M")
	if v == "" {
		return
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if minute := now.Truncate(time.Minute); minute.Equal(g.window) || minute.After(g.window) {
		if minute.After(g.window) {
			g.window, g.used = minute, 0
		}
		g.used = max(g.used, n)
	}
}

// ban stops all requests until server time until.
func (g *weightGate) ban(until time.Time) {
	g.mu.Lock()
	if until.After(g.bannedUntil) {
		g.bannedUntil = until
	}
	g.mu.Unlock()
}

// retryAfter reads how long Aster wants us to wait after a 429 or 418
// answered at server time now: the Retry-After header when sent; for 418
// the "banned until <ms>" of the message; else the rest of the minute
// (429) or two minutes, the shortest ban (418).
func retryAfter(now time.Time, status int, h http.Header, msg string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if status == http.StatusTeapot {
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
	return now.Truncate(time.Minute).Add(time.Minute).Sub(now)
}
