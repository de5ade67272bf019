package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/redis/go-redis/v9"
)

// WatchedPair is a protection pair the runtime cancels the rest of once
// one leg has fired or its position has closed, on venues that do not do
// it themselves (ProtectionLinker).
type WatchedPair struct {
	ID           string `json:"id"` // credential:clientOrderId
	CredentialID string `json:"credentialId"`
	AccountID    string `json:"accountId"`
	Market       string `json:"market"` // canonical
	TPOrderID    string `json:"tp,omitempty"`
	SLOrderID    string `json:"sl,omitempty"`
	// SeenPosition: the position existed at a check after placement, so
	// its absence later means it was closed (not yet opened).
	SeenPosition bool      `json:"seen,omitempty"`
	Placed       time.Time `json:"placed"`
}

// ProtectionStore keeps the watched pairs where every replica sees them,
// and lets one replica at a time act on a pair.
type ProtectionStore interface {
	Put(ctx context.Context, p WatchedPair) error
	List(ctx context.Context) ([]WatchedPair, error)
	Remove(ctx context.Context, id string) error
	// Lock reserves pair id for ttl; false when another replica holds it.
	Lock(ctx context.Context, id string, ttl time.Duration) (bool, error)
}

// MemoryProtections is a ProtectionStore for one process.
type MemoryProtections struct {
	mu    sync.Mutex
	pairs map[string]WatchedPair
	locks map[string]time.Time
}

// NewMemoryProtections returns an empty store.
func NewMemoryProtections() *MemoryProtections {
	return &MemoryProtections{pairs: map[string]WatchedPair{}, locks: map[string]time.Time{}}
}

// Put implements ProtectionStore.
func (s *MemoryProtections) Put(_ context.Context, p WatchedPair) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pairs[p.ID] = p
	return nil
}

// List implements ProtectionStore.
func (s *MemoryProtections) List(context.Context) ([]WatchedPair, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]WatchedPair, 0, len(s.pairs))
	for _, p := range s.pairs {
		out = append(out, p)
	}
	return out, nil
}

// Remove implements ProtectionStore.
func (s *MemoryProtections) Remove(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pairs, id)
	return nil
}

// Lock implements ProtectionStore.
func (s *MemoryProtections) Lock(_ context.Context, id string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if until, ok := s.locks[id]; ok && time.Now().Before(until) {
		return false, nil
	}
	s.locks[id] = time.Now().Add(ttl)
	return true, nil
}

// RedisProtections is a ProtectionStore shared by connector replicas: one
// hash of pairs and a lock key per pair.
type RedisProtections struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisProtections stores pairs under prefix in rdb.
func NewRedisProtections(rdb redis.UniversalClient, prefix string) *RedisProtections {
	return &RedisProtections{rdb: rdb, prefix: prefix}
}

// Put implements ProtectionStore.
func (s *RedisProtections) Put(ctx context.Context, p WatchedPair) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return s.rdb.HSet(ctx, s.prefix+"pairs", p.ID, b).Err()
}

// List implements ProtectionStore.
func (s *RedisProtections) List(ctx context.Context) ([]WatchedPair, error) {
	m, err := s.rdb.HGetAll(ctx, s.prefix+"pairs").Result()
	if err != nil {
		return nil, err
	}
	out := make([]WatchedPair, 0, len(m))
	for _, v := range m {
		var p WatchedPair
		if json.Unmarshal([]byte(v), &p) == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// Remove implements ProtectionStore.
func (s *RedisProtections) Remove(ctx context.Context, id string) error {
	return s.rdb.HDel(ctx, s.prefix+"pairs", id).Err()
}

// Lock implements ProtectionStore.
func (s *RedisProtections) Lock(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	return s.rdb.SetNX(ctx, s.prefix+"lock:"+id, "1", ttl).Result()
}

// linksProtection reports whether the venue ties protection pairs to
// their position itself.
func (r *Runtime) linksProtection() bool {
	l, ok := r.adapter.(ProtectionLinker)
	return ok && l.LinksProtection()
}

// watchProtection records a pair the venue will not link.
func (r *Runtime) watchProtection(ctx context.Context, cred Credential, m Market, clientID string, res contract.ProtectionResult) {
	if r.linksProtection() || (res.TPOrderID == "" && res.SLOrderID == "") {
		return
	}
	p := WatchedPair{ID: cred.ID + ":" + clientID, CredentialID: cred.ID, AccountID: cred.AccountID, Market: m.Canonical,
		TPOrderID: res.TPOrderID, SLOrderID: res.SLOrderID, Placed: r.cfg.Now()}
	// Whether the position is there now decides what its absence at a
	// later check means (closed, or not yet opened).
	if pos, err := r.adapter.GetPositions(ctx, cred, &m); err == nil && len(pos.Positions) > 0 && pos.Positions[0].Size.IsPositive() {
		p.SeenPosition = true
	}
	if err := r.protections.Put(context.WithoutCancel(ctx), p); err != nil {
		r.log.Error("protection pair not watched: its sibling leg will not be cancelled", "err", err,
			"credential_id", cred.ID, "client_order_id", clientID)
	}
}

// watchLoop checks the watched pairs every interval until ctx ends.
func (r *Runtime) watchLoop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pairs, err := r.protections.List(ctx)
		if err != nil {
			r.log.Warn("protection pairs not listed", "err", err)
			continue
		}
		for _, p := range pairs {
			if r.feeds.eventDriven(p.CredentialID) {
				continue // its feed's events drive it (protectionevents.go)
			}
			ok, err := r.protections.Lock(ctx, p.ID, interval)
			if err != nil || !ok {
				continue // another replica checks it
			}
			cctx, cancel := context.WithTimeout(ctx, interval)
			if err := r.checkPair(cctx, p); err != nil {
				r.log.Warn("protection pair check failed", "err", err, "credential_id", p.CredentialID, "pair", p.ID)
			}
			cancel()
		}
	}
}

// checkPair cancels what is left of a pair once a leg is gone (it fired or
// was cancelled) or the position it protects has closed.
func (r *Runtime) checkPair(ctx context.Context, p WatchedPair) error {
	cred, err := r.secrets.get(ctx, p.CredentialID)
	var ce *contract.Error
	if errors.As(err, &ce) && ce.Code == contract.CodeCredentialNotFound {
		return r.protections.Remove(ctx, p.ID) // the credential is gone
	}
	if err != nil {
		return err
	}
	m, err := r.markets.resolve(ctx, r.adapter, cred, p.Market)
	if err != nil {
		return err
	}
	r.log.Debug("protection pair polled", "credential_id", p.CredentialID, "pair", p.ID)
	orders, err := r.adapter.GetOrders(ctx, cred, &m)
	if err != nil {
		return err
	}
	open := map[string]bool{}
	for _, o := range orders.Orders {
		open[o.ID] = true
	}
	var left []string
	legs := 0
	for _, id := range []string{p.TPOrderID, p.SLOrderID} {
		if id == "" {
			continue
		}
		legs++
		if open[id] {
			left = append(left, id)
		}
	}
	if len(left) == 0 {
		return r.protections.Remove(ctx, p.ID)
	}
	positions, err := r.adapter.GetPositions(ctx, cred, &m)
	if err != nil {
		return err
	}
	flat := len(positions.Positions) == 0 || !positions.Positions[0].Size.IsPositive()
	if !flat && !p.SeenPosition {
		p.SeenPosition = true
		_ = r.protections.Put(ctx, p)
	}
	if len(left) == legs && !(flat && p.SeenPosition) {
		return nil // both legs wait and the position is there (or not yet)
	}
	for _, id := range left {
		if err := r.adapter.CancelOrder(ctx, cred, id, &m); err != nil {
			return fmt.Errorf("cancel leg %s: %w", id, err)
		}
		r.log.Info("protection leg cancelled", "credential_id", p.CredentialID, "order_id", id,
			"why", map[bool]string{true: "position closed", false: "sibling leg fired"}[len(left) == legs])
	}
	return r.protections.Remove(ctx, p.ID)
}
