package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Repeated warnings and errors (a store failing on every attempt, a
// dependency down under load) are limited per level and message: at most
// repeatBurst lines in repeatWindow, then one line saying how many were
// left out. A full disk once wrote hundreds of thousands of one warning.
const (
	repeatWindow = 10 * time.Second
	repeatBurst  = 10
)

// repeatLimiter is a slog.Handler that limits repeated lines of level
// warn and above; lower levels pass untouched.
type repeatLimiter struct {
	slog.Handler
	state *repeatState
}

type repeatState struct {
	mu   sync.Mutex
	now  func() time.Time
	seen map[repeatKey]*repeatCount
}

type repeatKey struct {
	level slog.Level
	msg   string
}

type repeatCount struct {
	start      time.Time
	n, dropped int
}

func limitRepeats(h slog.Handler, now func() time.Time) slog.Handler {
	return repeatLimiter{Handler: h, state: &repeatState{now: now, seen: map[repeatKey]*repeatCount{}}}
}

func (h repeatLimiter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.Handler.Handle(ctx, r)
	}
	pass, dropped, since := h.state.admit(repeatKey{r.Level, r.Message})
	if dropped > 0 {
		sum := slog.NewRecord(r.Time, r.Level, "repeated log lines left out", 0)
		sum.AddAttrs(slog.String("repeated_msg", r.Message), slog.Int("left_out", dropped),
			slog.Float64("over_seconds", since.Seconds()))
		_ = h.Handler.Handle(ctx, sum)
	}
	if !pass {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// admit counts a line of key: whether it is written, and how many lines
// of the window that just ended were left out (and over how long).
func (s *repeatState) admit(key repeatKey) (pass bool, dropped int, since time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	c := s.seen[key]
	if c == nil || now.Sub(c.start) >= repeatWindow {
		if c != nil {
			dropped, since = c.dropped, now.Sub(c.start)
		}
		c = &repeatCount{start: now}
		s.seen[key] = c
	}
	c.n++
	if c.n > repeatBurst {
		c.dropped++
		return false, dropped, since
	}
	return true, dropped, since
}

func (h repeatLimiter) WithAttrs(as []slog.Attr) slog.Handler {
	return repeatLimiter{Handler: h.Handler.WithAttrs(as), state: h.state}
}

func (h repeatLimiter) WithGroup(name string) slog.Handler {
	return repeatLimiter{Handler: h.Handler.WithGroup(name), state: h.state}
}
