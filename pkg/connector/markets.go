package connector

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/symbol"
	"github.com/shopspring/decimal"
)

// marketCache keeps each environment's market list for a while, and
// refreshes early (at most every minRefresh) when asked for a market it
// does not know, so a new listing shows up without a restart.
type marketCache struct {
	mu         sync.Mutex
	ttl        time.Duration
	minRefresh time.Duration
	now        func() time.Time
	envs       map[contract.Environment]*marketSet
}

type marketSet struct {
	fetched  time.Time
	list     []Market
	byNative map[string]*Market
	byCanon  map[string]*Market
	// resolved remembers what a client's spelling of a market matched, so
	// a repeated read neither parses it nor scans the list again. The set
	// is replaced, not changed, on refresh, so an entry never goes stale.
	mu       sync.RWMutex
	resolved map[string]Market
}

// maxResolved bounds a set's memo of spellings: symbols parse in many
// spellings (case, separators), and a client could send endless ones.
const maxResolved = 4096

func newMarketCache(ttl time.Duration, now func() time.Time) *marketCache {
	return &marketCache{ttl: ttl, minRefresh: 30 * time.Second, now: now, envs: map[contract.Environment]*marketSet{}}
}

func newMarketSet(list []Market, at time.Time) *marketSet {
	s := &marketSet{fetched: at, list: list, byNative: map[string]*Market{}, byCanon: map[string]*Market{},
		resolved: map[string]Market{}}
	for i := range list {
		m := &list[i]
		s.byNative[m.Native] = m
		s.byCanon[m.Canonical] = m
	}
	return s
}

// set returns the cached markets of the credential's environment, fetching
// them when missing, stale, or (with force) older than minRefresh.
func (c *marketCache) set(ctx context.Context, a Adapter, cred Credential, force bool) (*marketSet, error) {
	env := cred.Environment
	c.mu.Lock()
	s := c.envs[env]
	now := c.now()
	fresh := s != nil && now.Sub(s.fetched) < c.ttl && !(force && now.Sub(s.fetched) >= c.minRefresh)
	c.mu.Unlock()
	if fresh {
		return s, nil
	}
	list, err := a.Markets(ctx, cred)
	if err != nil {
		if s != nil { // a stale list beats no answer
			return s, nil
		}
		return nil, err
	}
	s = newMarketSet(list, now)
	c.mu.Lock()
	c.envs[env] = s
	c.mu.Unlock()
	return s, nil
}

// fresh returns env's markets when they are cached and within their TTL.
func (c *marketCache) fresh(env contract.Environment) *marketSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.envs[env]; s != nil && c.now().Sub(s.fetched) < c.ttl {
		return s
	}
	return nil
}

// resolve finds the market a client's symbol means on this venue. The quote
// is a preference: BTC-USD-PERP finds BTCUSDT on a USDT venue.
func (c *marketCache) resolve(ctx context.Context, a Adapter, cred Credential, raw string) (Market, error) {
	if s := c.fresh(cred.Environment); s != nil {
		if m, ok := s.remembered(raw); ok {
			return m, nil
		}
	}
	sym, err := symbol.Parse(raw)
	if err != nil {
		return Market{}, contract.Errorf(contract.CodeInvalidRequest, "field \"market\": %v", err)
	}
	for _, force := range []bool{false, true} {
		s, err := c.set(ctx, a, cred, force)
		if err != nil {
			return Market{}, err
		}
		if m, ok := s.match(sym); ok {
			s.remember(raw, m)
			return m, nil
		}
	}
	return Market{}, contract.Errorf(contract.CodeUnknownMarket,
		"market %q is not listed on %s; getMarketsWithFunding lists the markets", raw, a.Exchange())
}

func (s *marketSet) remembered(raw string) (Market, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.resolved[raw]
	return m, ok
}

func (s *marketSet) remember(raw string, m Market) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.resolved) < maxResolved {
		s.resolved[raw] = m
	}
}

func (s *marketSet) match(sym symbol.Symbol) (Market, bool) {
	var fallback *Market
	for i := range s.list {
		m := &s.list[i]
		if m.Base != sym.Base || max(m.Multiplier, 1) != max(sym.Multiplier, 1) {
			continue
		}
		if sym.Quote == "" || sym.Quote == m.Quote {
			return *m, true
		}
		if fallback == nil {
			fallback = m
		}
	}
	if fallback != nil {
		return *fallback, true
	}
	return Market{}, false
}

// canonical maps a symbol an adapter returned (native or canonical) to the
// canonical form.
func (s *marketSet) canonical(sym string) string {
	if m, ok := s.byNative[sym]; ok {
		return m.Canonical
	}
	if m, ok := s.byCanon[sym]; ok {
		return m.Canonical
	}
	return sym
}

// roundOrder applies DESIGN §7: sizes down to the lot step; buy prices down
// and sell prices up to the tick, so the order is never worse than asked.
func roundOrder(o *OrderRequest) error {
	m := o.Market
	o.Size = floorStep(o.Size, m.LotSize)
	if !o.Size.IsPositive() {
		return contract.Errorf(contract.CodeInvalidRequest,
			"size rounds to zero on %s: the lot step is %s", m.Canonical, m.LotSize)
	}
	if m.MinSize.IsPositive() && o.Size.LessThan(m.MinSize) {
		return contract.Errorf(contract.CodeInvalidRequest,
			"size %s is below the minimum size %s of %s", o.Size, m.MinSize, m.Canonical)
	}
	if o.Type == Limit {
		if o.Side == contract.Buy {
			o.Price = floorStep(o.Price, m.TickSize)
		} else {
			o.Price = ceilStep(o.Price, m.TickSize)
		}
		if !o.Price.IsPositive() {
			return contract.Errorf(contract.CodeInvalidRequest,
				"price rounds to zero on %s: the tick size is %s", m.Canonical, m.TickSize)
		}
		exempt := (o.ReduceOnly && m.ReduceOnlyBelowMinNotional) || m.MinNotionalAtMark // judged at the mark in prepare
		if m.MinNotional.IsPositive() && !exempt && o.Size.Mul(o.Price).LessThan(m.MinNotional) {
			return contract.Errorf(contract.CodeInvalidRequest,
				"order value %s (size x price) is below the minimum notional %s of %s",
				o.Size.Mul(o.Price), m.MinNotional, m.Canonical)
		}
	}
	if o.Type == Stop {
		o.TriggerPrice = nearestStep(o.TriggerPrice, m.TickSize)
		if !o.TriggerPrice.IsPositive() {
			return contract.Errorf(contract.CodeInvalidRequest,
				"triggerPrice rounds to zero on %s: the tick size is %s", m.Canonical, m.TickSize)
		}
	}
	return nil
}

// The step helpers work on positive values with exact decimal remainders
// (no division, so no precision loss).
func floorStep(v, step decimal.Decimal) decimal.Decimal {
	if !step.IsPositive() {
		return v
	}
	return v.Sub(v.Mod(step))
}

func ceilStep(v, step decimal.Decimal) decimal.Decimal {
	if !step.IsPositive() {
		return v
	}
	if r := v.Mod(step); !r.IsZero() {
		return v.Sub(r).Add(step)
	}
	return v
}

func nearestStep(v, step decimal.Decimal) decimal.Decimal {
	if !step.IsPositive() {
		return v
	}
	r := v.Mod(step)
	if r.Add(r).GreaterThanOrEqual(step) {
		return v.Sub(r).Add(step)
	}
	return v.Sub(r)
}

func (m Market) String() string { return fmt.Sprintf("%s(%s)", m.Canonical, m.Native) }
