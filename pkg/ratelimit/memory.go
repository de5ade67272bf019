package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Memory is a Limiter for one process. Entries whose day has passed are
// dropped once a minute, so memory holds only keys seen today.
type Memory struct {
	now func() time.Time

	mu        sync.Mutex
	counters  map[string]*counter
	lastSweep time.Time
}

type counter struct {
	minute, day time.Time // window starts the counts belong to
	m, d        int
}

var _ Limiter = (*Memory)(nil)

// NewMemory returns an in-process limiter reading time from now (nil means
// time.Now).
func NewMemory(now func() time.Time) *Memory {
	return &Memory{now: clock(now), counters: map[string]*counter{}}
}

// Allow implements Limiter. It fails only on invalid limits or a done ctx.
func (l *Memory) Allow(ctx context.Context, key string, lim Limits) (Decision, error) {
	if err := lim.check(); err != nil {
		return Decision{}, err
	}
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	now := l.now()
	w := windowAt(now)

	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(w)
	c := l.counters[key]
	if c == nil {
		c = &counter{}
		l.counters[key] = c
	}
	if !c.minute.Equal(w.minute) {
		c.minute, c.m = w.minute, 0
	}
	if !c.day.Equal(w.day) {
		c.day, c.d = w.day, 0
	}
	allowed := c.m < lim.PerMinute && c.d < lim.PerDay
	if allowed {
		c.m++
		c.d++
	}
	return decide(now, w, lim, allowed, c.m, c.d), nil
}

// sweep drops counters of past days, at most once a minute. The caller
// holds mu.
func (l *Memory) sweep(w window) {
	if w.minute.Equal(l.lastSweep) {
		return
	}
	l.lastSweep = w.minute
	for k, c := range l.counters {
		if !c.day.Equal(w.day) {
			delete(l.counters, k)
		}
	}
}

// Len returns how many keys the limiter currently holds counters for.
func (l *Memory) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.counters)
}
