package connector

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/shopspring/decimal"
)

// LeverageReader is implemented by adapters that can read a market's
// leverage setting on a credential, with or without a position. Without
// it the maxLeverage guard reads the leverage of the open position, and an
// order on a market with none is not judged on leverage.
type LeverageReader interface {
	GetLeverage(ctx context.Context, c Credential, m Market) (int, error)
}

// leverageTTL is how long a market's leverage read is reused. A
// setLeverage through the gateway drops it on every replica at once; a
// change made in the venue's own interface is seen once it expires.
const leverageTTL = 10 * time.Second

// leverageCache keeps recent leverage reads per credential and market.
// gen counts the drops of each entry, so a read that was under way when
// the leverage changed does not store the old value.
type leverageCache struct {
	now     func() time.Time
	mu      sync.Mutex
	entries map[string]leverageEntry
	gen     map[string]uint64
}

type leverageEntry struct {
	lev   decimal.Decimal
	known bool
	at    time.Time
}

func newLeverageCache(now func() time.Time) *leverageCache {
	return &leverageCache{now: now, entries: map[string]leverageEntry{}, gen: map[string]uint64{}}
}

func leverageKey(credID, native string) string { return credID + " " + native }

// get returns the cached leverage of m on the credential, or reads it.
func (c *leverageCache) get(ctx context.Context, credID string, m Market,
	read func(context.Context) (decimal.Decimal, bool, error)) (decimal.Decimal, bool, error) {
	k := leverageKey(credID, m.Native)
	c.mu.Lock()
	e, ok := c.entries[k]
	gen := c.gen[k]
	c.mu.Unlock()
	if ok && c.now().Sub(e.at) < leverageTTL {
		return e.lev, e.known, nil
	}
	lev, known, err := read(ctx)
	if err != nil {
		return lev, known, err
	}
	c.mu.Lock()
	if c.gen[k] == gen {
		c.entries[k] = leverageEntry{lev: lev, known: known, at: c.now()}
	}
	c.mu.Unlock()
	return lev, known, nil
}

// drop forgets what is known of one market's leverage on a credential.
func (c *leverageCache) drop(credID, native string) {
	k := leverageKey(credID, native)
	c.mu.Lock()
	delete(c.entries, k)
	c.gen[k]++
	c.mu.Unlock()
}

// leverageChanged is the message every replica of an exchange's connector
// gets when a setLeverage went through one of them.
type leverageChanged struct {
	CredentialID string `json:"credentialId"`
	Market       string `json:"market"` // the venue's symbol
}

// leverageSet drops the cached leverage of m on the credential here and,
// through the bus, on every other replica. It runs whatever setLeverage
// answered: a failed or timed-out call may still have changed it.
func (r *Runtime) leverageSet(credID string, m Market) {
	r.leverage.drop(credID, m.Native)
	body, _ := json.Marshal(leverageChanged{CredentialID: credID, Market: m.Native})
	if err := r.nc.Publish(r.cfg.Subjects.LeverageChanged(r.adapter.Exchange()), body); err != nil {
		r.log.Warn("leverage change not broadcast; other replicas see it once their cache expires", "err", err)
	}
}

func (r *Runtime) onLeverageChanged(msg *nats.Msg) {
	var ev leverageChanged
	if json.Unmarshal(msg.Data, &ev) == nil && ev.CredentialID != "" {
		r.leverage.drop(ev.CredentialID, ev.Market)
	}
}
