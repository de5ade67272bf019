package venuekit

import (
	"context"
	"sync"

	"github.com/perpgate/perpgate/pkg/connector"
)

// Lists keeps each host's (or scope's) last Markets answer, so operations
// that need the market list read it once.
type Lists struct {
	mu sync.Mutex
	m  map[string][]connector.Market
}

// Set records key's list.
func (l *Lists) Set(key string, list []connector.Market) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string][]connector.Market{}
	}
	l.m[key] = list
}

// Get is key's last list, or load's answer (load is the adapter's Markets,
// which Sets it) when there is none yet.
func (l *Lists) Get(ctx context.Context, key string, load func(context.Context) ([]connector.Market, error)) ([]connector.Market, error) {
	l.mu.Lock()
	list := l.m[key]
	l.mu.Unlock()
	if list != nil {
		return list, nil
	}
	return load(ctx)
}

// Catalog is Lists plus the venue's own rules per native symbol that came
// with each Markets answer (market-order limits, contract values).
type Catalog[M any] struct {
	Lists
	mu    sync.Mutex
	rules map[string]map[string]M
}

// Put records key's Markets answer and its rules by native symbol.
func (c *Catalog[M]) Put(key string, list []connector.Market, rules map[string]M) {
	c.Set(key, list)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rules == nil {
		c.rules = map[string]map[string]M{}
	}
	c.rules[key] = rules
}

// Rules is native's rules on key; ok is false when the last answer did not
// list it (or there was none).
func (c *Catalog[M]) Rules(key, native string) (M, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.rules[key][native]
	return r, ok
}
