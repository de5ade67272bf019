package connector

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"
)

// AttachedEntry is an entry order placed with takeProfit/stopLoss on a
// venue that does not attach them itself: the intent, stored before the
// entry is sent, and the pair that protects what has filled so far. It
// lives until the entry is done and its pair covers the whole fill.
type AttachedEntry struct {
	ID            string                `json:"id"` // credential:clientOrderId of the entry
	CredentialID  string                `json:"credentialId"`
	Market        string                `json:"market"` // canonical
	EntryClientID string                `json:"entry"`
	Side          contract.PositionSide `json:"side"` // the position the entry opens
	TakeProfit    *decimal.Decimal      `json:"tp,omitempty"`
	StopLoss      *decimal.Decimal      `json:"sl,omitempty"`
	// Gen is the generation of the standing pair (0: none yet); each
	// resize places generation Gen+1 under its own clientOrderId.
	Gen       int             `json:"gen,omitempty"`
	Covered   decimal.Decimal `json:"covered"` // the size the standing pair covers
	TPOrderID string          `json:"tpId,omitempty"`
	SLOrderID string          `json:"slId,omitempty"`
	// Pending is a generation being placed: after a crash its legs are
	// looked up by clientOrderId before anything is placed again.
	Pending int `json:"pending,omitempty"`
	// Cancel holds legs of replaced pairs still to cancel.
	Cancel  []string  `json:"cancel,omitempty"`
	Created time.Time `json:"created"`
}

// AttachStore keeps attached entries where every replica sees them and
// a restart finds them.
type AttachStore interface {
	// Add stores e unless an entry with its id exists; false then.
	Add(ctx context.Context, e AttachedEntry) (bool, error)
	Put(ctx context.Context, e AttachedEntry) error
	Get(ctx context.Context, id string) (AttachedEntry, bool, error)
	List(ctx context.Context) ([]AttachedEntry, error)
	Remove(ctx context.Context, id string) error
	// Lock reserves id for ttl; false when another holder has it.
	Lock(ctx context.Context, id string, ttl time.Duration) (bool, error)
	Unlock(ctx context.Context, id string) error
}

// MemoryAttachments is an AttachStore for one process; with a path it
// rewrites a file on every change (there are few entries at a time).
type MemoryAttachments struct {
	mu      sync.Mutex
	entries map[string]AttachedEntry
	locks   map[string]time.Time
	path    string
}

// NewMemoryAttachments returns an empty in-memory store.
func NewMemoryAttachments() *MemoryAttachments {
	return &MemoryAttachments{entries: map[string]AttachedEntry{}, locks: map[string]time.Time{}}
}

// NewFileAttachments opens (or creates, mode 0600) the store kept at path.
func NewFileAttachments(path string) (*MemoryAttachments, error) {
	s := NewMemoryAttachments()
	s.path = path
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &s.entries); err != nil {
		return nil, err
	}
	return s, nil
}

// save writes the entries under mu: to a temporary file, synced, then
// renamed over path, so a crash leaves the old or the new set.
func (s *MemoryAttachments) save() error {
	if s.path == "" {
		return nil
	}
	b, err := json.Marshal(s.entries)
	if err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Add implements AttachStore.
func (s *MemoryAttachments) Add(_ context.Context, e AttachedEntry) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[e.ID]; ok {
		return false, nil
	}
	s.entries[e.ID] = e
	return true, s.save()
}

// Put implements AttachStore.
func (s *MemoryAttachments) Put(_ context.Context, e AttachedEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[e.ID] = e
	return s.save()
}

// Get implements AttachStore.
func (s *MemoryAttachments) Get(_ context.Context, id string) (AttachedEntry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[id]
	return e, ok, nil
}

// List implements AttachStore.
func (s *MemoryAttachments) List(context.Context) ([]AttachedEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]AttachedEntry, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e)
	}
	return out, nil
}

// Remove implements AttachStore.
func (s *MemoryAttachments) Remove(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[id]; !ok {
		return nil
	}
	delete(s.entries, id)
	return s.save()
}

// Lock implements AttachStore.
func (s *MemoryAttachments) Lock(_ context.Context, id string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if until, ok := s.locks[id]; ok && time.Now().Before(until) {
		return false, nil
	}
	s.locks[id] = time.Now().Add(ttl)
	return true, nil
}

// Unlock implements AttachStore.
func (s *MemoryAttachments) Unlock(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.locks, id)
	return nil
}

// RedisAttachments is an AttachStore shared by connector replicas: one
// hash of entries and a lock key per entry.
type RedisAttachments struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisAttachments stores entries under prefix in rdb.
func NewRedisAttachments(rdb redis.UniversalClient, prefix string) *RedisAttachments {
	return &RedisAttachments{rdb: rdb, prefix: prefix}
}

// Add implements AttachStore.
func (s *RedisAttachments) Add(ctx context.Context, e AttachedEntry) (bool, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return false, err
	}
	return s.rdb.HSetNX(ctx, s.prefix+"entries", e.ID, b).Result()
}

// Put implements AttachStore.
func (s *RedisAttachments) Put(ctx context.Context, e AttachedEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return s.rdb.HSet(ctx, s.prefix+"entries", e.ID, b).Err()
}

// Get implements AttachStore.
func (s *RedisAttachments) Get(ctx context.Context, id string) (AttachedEntry, bool, error) {
	v, err := s.rdb.HGet(ctx, s.prefix+"entries", id).Result()
	if errors.Is(err, redis.Nil) {
		return AttachedEntry{}, false, nil
	}
	if err != nil {
		return AttachedEntry{}, false, err
	}
	var e AttachedEntry
	return e, true, json.Unmarshal([]byte(v), &e)
}

// List implements AttachStore.
func (s *RedisAttachments) List(ctx context.Context) ([]AttachedEntry, error) {
	m, err := s.rdb.HGetAll(ctx, s.prefix+"entries").Result()
	if err != nil {
		return nil, err
	}
	out := make([]AttachedEntry, 0, len(m))
	for _, v := range m {
		var e AttachedEntry
		if json.Unmarshal([]byte(v), &e) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// Remove implements AttachStore.
func (s *RedisAttachments) Remove(ctx context.Context, id string) error {
	return s.rdb.HDel(ctx, s.prefix+"entries", id).Err()
}

// Lock implements AttachStore.
func (s *RedisAttachments) Lock(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	return s.rdb.SetNX(ctx, s.prefix+"lock:"+id, "1", ttl).Result()
}

// Unlock implements AttachStore.
func (s *RedisAttachments) Unlock(ctx context.Context, id string) error {
	return s.rdb.Del(ctx, s.prefix+"lock:"+id).Err()
}
