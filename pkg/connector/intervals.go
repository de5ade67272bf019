package connector

import (
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

// intervalTTL is how long a market's funding interval is trusted: venues
// change one rarely and announce it.
const intervalTTL = time.Hour

// intervalCache keeps each market's funding interval in hours, by network
// and native symbol, as REST answers gave it. Stream frames carry the
// rate but not the interval it covers.
type intervalCache struct {
	now func() time.Time

	mu sync.Mutex
	m  map[string]interval
}

type interval struct {
	hours int
	at    time.Time
}

func newIntervalCache(now func() time.Time) *intervalCache {
	return &intervalCache{now: now, m: map[string]interval{}}
}

func (c *intervalCache) put(env contract.Environment, native string, hours int) {
	if hours <= 0 {
		return
	}
	c.mu.Lock()
	c.m[string(env)+" "+native] = interval{hours: hours, at: c.now()}
	c.mu.Unlock()
}

// get is the market's interval, 0 when unknown or older than intervalTTL.
func (c *intervalCache) get(env contract.Environment, native string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if iv, ok := c.m[string(env)+" "+native]; ok && c.now().Sub(iv.at) < intervalTTL {
		return iv.hours
	}
	return 0
}
