package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/redis/go-redis/v9"
)

// IdempotencyTTL is how long a placement's record answers repeats of its
// (credential, clientOrderId) (DESIGN §6).
const IdempotencyTTL = 24 * time.Hour

// ErrInFlight means another placement with the same key has not finished
// and its deadline has not passed.
var ErrInFlight = errors.New("placement with this clientOrderId is in flight")

// ErrClaimLost means a stale claim was taken over by someone else first.
var ErrClaimLost = errors.New("stale placement claim taken over by another request")

// Record is what the store keeps per (credential, clientOrderId): a
// pending claim until the placement's outcome is known, then its result.
// Fingerprint describes the order's parameters, so a repeat with other
// parameters can be told from a retry.
type Record struct {
	// Result is the stored result; nil while pending.
	Result json.RawMessage `json:"r,omitempty"`
	// Fingerprint maps each order parameter to its value as placed.
	Fingerprint map[string]string `json:"f,omitempty"`
	// Deadline of a pending claim: after it the placement is over, and its
	// outcome must be looked up at the venue before anything is placed.
	Deadline time.Time `json:"d,omitzero"`
}

// Pending reports whether the record is a claim without a result.
func (r Record) Pending() bool { return r.Result == nil }

// Stale reports whether a pending claim's deadline has passed at now.
func (r Record) Stale(now time.Time) bool { return r.Pending() && !now.Before(r.Deadline) }

// IdempotencyStore remembers placements by key. Implementations must be
// safe across connector replicas when shared (Redis) and within one
// process (Memory, File), and should survive a restart (Redis with
// persistence, File).
type IdempotencyStore interface {
	// Claim reserves key with a pending record when there is none and
	// returns claimed=true. Otherwise it returns the existing record
	// (a result, a live claim, or a stale claim) and claimed=false.
	Claim(ctx context.Context, key string, rec Record) (existing Record, claimed bool, err error)
	// TakeOver replaces the stale claim old with rec, atomically: it
	// returns ErrClaimLost when the record is no longer old.
	TakeOver(ctx context.Context, key string, old, rec Record) error
	// Complete stores the result of a placement.
	Complete(ctx context.Context, key string, rec Record) error
	// Release drops a claim whose placement certainly placed nothing.
	Release(ctx context.Context, key string) error
}

func encodeRecord(r Record) ([]byte, error) { return json.Marshal(r) }

// decodeRecord reads a stored record. Values written before records had a
// shape are a bare result object: a completed placement without a
// fingerprint.
func decodeRecord(b []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("decode idempotency record: %w", err)
	}
	if r.Result == nil && r.Deadline.IsZero() {
		return Record{Result: append(json.RawMessage(nil), b...)}, nil
	}
	return r, nil
}

// MemoryIdempotency is an in-process IdempotencyStore; NewFileIdempotency
// adds a log on disk to it.
type MemoryIdempotency struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]memEntry
	sweepAt time.Time
	// onDisk, with a log, holds the settled records kept on disk by a hash
	// of their key (the line names its key, which a look-up checks);
	// entries holds the others: claims, records not yet settled, and keys
	// whose hash another key holds.
	onDisk map[uint64]diskEntry
	// runs, oldest first, hold the settled records onDisk held before it
	// was sealed (idempotency_runs.go); a look-up tries them after it.
	runs []*diskRun
	// salt seeds the key hash. Runs outlive the process, so the hash must
	// be one a later process can repeat (the file store keeps the salt in
	// its manifest); a random salt keeps clients from choosing collisions.
	salt uint64
	// hashKey replaces the hash in tests, to make keys collide.
	hashKey func(string) uint64
	// With a log: persist writes each change under mu before it takes
	// effect (a nil record is a removal) and returns its position; after
	// mu is released, durable waits until the log holds it on disk. So
	// concurrent placements share the log's fsyncs instead of each
	// holding mu across one, and no caller hears of a change, its own or
	// another's, before it is durable.
	// persist also returns where the change's line is (zero without a
	// log): a completed record is then kept there, not in memory.
	persist func(key string, rec *Record, expires time.Time) (uint64, diskRef, error)
	durable func(pos uint64) error
	// last is the position of the latest change persisted, and line its
	// log line (with a log).
	last uint64
	line []byte
	// changed, when set, runs under mu after each change took effect.
	changed func()
}

type memEntry struct {
	// rec is the record, or zero when ref says where on disk it is.
	rec     Record
	ref     diskRef
	expires time.Time
	// settle is the barrier of the placement that completed rec: what the
	// venue deferred to it must be durable before anyone hears of rec.
	settle *appendlog.Barrier
}

// NewMemoryIdempotency returns an empty store; now may be nil.
func NewMemoryIdempotency(now func() time.Time) *MemoryIdempotency {
	if now == nil {
		now = time.Now
	}
	return &MemoryIdempotency{now: now, entries: map[string]memEntry{}, salt: rand.Uint64()}
}

// diskEntry is a settled record on disk: 32 bytes of memory besides its
// key's hash.
type diskEntry struct {
	ref     diskRef
	expires int64 // Unix nanoseconds
}

func (s *MemoryIdempotency) hash(key string) uint64 {
	if s.hashKey != nil {
		return s.hashKey(key)
	}
	return saltedHash(s.salt, key)
}

// saltedHash is FNV-1a of key started from salt.
func saltedHash(salt uint64, key string) uint64 {
	const prime = 1099511628211
	h := salt ^ 14695981039346656037
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime
	}
	return h
}

// lookup returns key's entry, read from disk when it is kept there.
func (s *MemoryIdempotency) lookup(key string) (memEntry, bool, error) {
	if e, ok := s.entries[key]; ok {
		return e, true, nil
	}
	h := s.hash(key)
	if d, ok := s.onDisk[h]; ok {
		k, rec, err := d.ref.seg.readLine(d.ref.off, d.ref.n)
		if err != nil {
			return memEntry{}, false, err
		}
		if k == key {
			return memEntry{rec: rec, expires: time.Unix(0, d.expires)}, true, nil
		}
	}
	return s.findRun(key, h) // a run's key may share another key's hash
}

// store sets key's entry: on disk by its hash when it is a settled record
// there and the hash is free or key's own.
func (s *MemoryIdempotency) store(key string, e memEntry) {
	if s.onDisk == nil || e.ref.seg == nil || e.settle != nil {
		s.dropDisk(key)
		s.entries[key] = e
		return
	}
	h := s.hash(key)
	if d, ok := s.onDisk[h]; ok {
		if k, _, err := d.ref.seg.readLine(d.ref.off, d.ref.n); err != nil || k != key {
			s.entries[key] = e // another key's hash: kept by name
			return
		}
	}
	delete(s.entries, key)
	s.onDisk[h] = diskEntry{ref: e.ref, expires: e.expires.UnixNano()}
}

// remove drops key's entry wherever it is.
func (s *MemoryIdempotency) remove(key string) {
	delete(s.entries, key)
	s.dropDisk(key)
}

func (s *MemoryIdempotency) dropDisk(key string) {
	h := s.hash(key)
	d, ok := s.onDisk[h]
	if !ok {
		return
	}
	if k, _, err := d.ref.seg.readLine(d.ref.off, d.ref.n); err == nil && k == key {
		delete(s.onDisk, h)
	}
}

// live is how many records the store holds.
func (s *MemoryIdempotency) live() int { return len(s.entries) + len(s.onDisk) + s.runLen() }

// change persists and applies one change under mu; rec nil removes key.
func (s *MemoryIdempotency) change(key string, rec *Record) error {
	return s.changeSettled(key, rec, nil)
}

// changeSettled is change for a record that settle must make whole.
func (s *MemoryIdempotency) changeSettled(key string, rec *Record, settle *appendlog.Barrier) error {
	var expires time.Time
	if rec != nil {
		expires = s.now().Add(IdempotencyTTL)
	}
	return s.changeUntil(key, rec, settle, expires)
}

// changeUntil is changeSettled with the record's expiry given.
func (s *MemoryIdempotency) changeUntil(key string, rec *Record, settle *appendlog.Barrier, expires time.Time) error {
	var ref diskRef
	if s.persist != nil {
		pos, r, err := s.persist(key, rec, expires)
		if err != nil {
			return err
		}
		s.last, ref = pos, r
	}
	switch {
	case rec == nil:
		s.remove(key)
	case rec.Pending() || ref.seg == nil:
		// A claim stays in memory: TakeOver compares it.
		s.store(key, memEntry{rec: *rec, expires: expires, settle: settle})
	default:
		s.store(key, memEntry{ref: ref, expires: expires, settle: settle})
	}
	if s.changed != nil {
		s.changed()
	}
	return nil
}

// unlock releases mu and then waits until every change up to the latest
// is durable, and with settle (may be nil) what it holds, both at once;
// err, when set, is returned as it is.
func (s *MemoryIdempotency) unlock(err error, settle *appendlog.Barrier) error {
	pos := s.last
	s.mu.Unlock()
	if err != nil {
		return err
	}
	var durable func() error
	if s.durable != nil {
		durable = func() error { return s.durable(pos) }
	}
	if settle != nil {
		return appendlog.Together(durable, settle.Wait)
	}
	return appendlog.Together(durable)
}

// Claim implements IdempotencyStore.
func (s *MemoryIdempotency) Claim(ctx context.Context, key string, rec Record) (Record, bool, error) {
	s.mu.Lock()
	now := s.now()
	s.sweep(now)
	e, ok, err := s.lookup(key)
	if err != nil {
		return Record{}, false, s.unlock(err, nil)
	}
	if ok && now.Before(e.expires) {
		// The record may be a change still on its way to disk.
		rec, err := e.record()
		return rec, false, s.unlock(err, e.settle)
	}
	if err := s.change(key, &rec); err != nil {
		return Record{}, false, s.unlock(err, nil)
	}
	// A venue in this process that records the claim with its order
	// (ctx's barrier allows it) makes both durable at once: the claim
	// then waits for nothing here.
	if s.durable != nil {
		pos := s.last
		if appendlog.BarrierFrom(ctx).Hold(s.line, func() error { return s.durable(pos) }) {
			s.mu.Unlock()
			return Record{}, true, nil
		}
	}
	return Record{}, true, s.unlock(nil, nil)
}

// TakeOver implements IdempotencyStore.
func (s *MemoryIdempotency) TakeOver(_ context.Context, key string, old, rec Record) error {
	s.mu.Lock()
	e, ok, err := s.lookup(key)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if cur, rerr := e.record(); !ok || rerr != nil || !sameRecord(cur, old) {
		s.mu.Unlock()
		return ErrClaimLost
	}
	return s.unlock(s.change(key, &rec), nil)
}

// Complete implements IdempotencyStore. With a barrier in ctx (the venue
// deferred its durable write to it) it waits for the barrier and for the
// log at once, and a repeat that reads the result waits for both too.
func (s *MemoryIdempotency) Complete(ctx context.Context, key string, rec Record) error {
	settle := appendlog.BarrierFrom(ctx)
	s.mu.Lock()
	if settle.Taken() && s.durable != nil {
		if err := s.completeNoted(key, &rec, settle); err != nil {
			return err
		}
	} else if err := s.unlock(s.changeSettled(key, &rec, settle), settle); err != nil {
		return err
	}
	if settle != nil {
		// Settled: the entry need not keep the barrier (and what its
		// waits hold) for the record's 24 hours.
		s.mu.Lock()
		if e, ok := s.entries[key]; ok && e.settle == settle {
			e.settle = nil
			s.store(key, e)
		}
		s.mu.Unlock()
	}
	return nil
}

// completeNoted completes a placement whose venue took the claim (the
// barrier's held write) into its journal: the result goes there too, and
// the venue's one durable write covers claim, order and result; this log
// is written but not waited for. If the venue cannot take the note, the
// claim and the result wait for this log as usual. Called with mu held.
func (s *MemoryIdempotency) completeNoted(key string, rec *Record, settle *appendlog.Barrier) error {
	err := s.changeSettled(key, rec, settle)
	pos, line := s.last, s.line
	s.mu.Unlock()
	if err != nil {
		return err
	}
	// The line is in this log before it is in the journal, so a journal
	// snapshot, which syncs this log first, never drops a note this log
	// lacks.
	if settle.Note(line) != nil {
		return appendlog.Together(func() error { return s.durable(pos) }, settle.Wait)
	}
	return settle.Wait()
}

// Release implements IdempotencyStore.
func (s *MemoryIdempotency) Release(_ context.Context, key string) error {
	s.mu.Lock()
	return s.unlock(s.change(key, nil), nil)
}

// sweep drops expired entries at most once a minute so memory stays bounded.
func (s *MemoryIdempotency) sweep(now time.Time) {
	if now.Before(s.sweepAt) {
		return
	}
	s.sweepAt = now.Add(time.Minute)
	for k, e := range s.entries {
		if !now.Before(e.expires) {
			delete(s.entries, k)
		}
	}
	for h, d := range s.onDisk {
		if now.UnixNano() >= d.expires {
			delete(s.onDisk, h)
		}
	}
	s.sweepRuns(now)
}

func sameRecord(a, b Record) bool {
	x, _ := encodeRecord(a)
	y, _ := encodeRecord(b)
	return string(x) == string(y)
}

// RedisIdempotency is an IdempotencyStore shared by connector replicas.
// Records outlive a Redis restart only when Redis persists them
// (appendonly; see the README's Failure behaviour).
type RedisIdempotency struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisIdempotency stores entries under prefix in rdb.
func NewRedisIdempotency(rdb redis.UniversalClient, prefix string) *RedisIdempotency {
	return &RedisIdempotency{rdb: rdb, prefix: prefix}
}

// Claim implements IdempotencyStore.
func (s *RedisIdempotency) Claim(ctx context.Context, key string, rec Record) (Record, bool, error) {
	k := s.prefix + key
	val, err := encodeRecord(rec)
	if err != nil {
		return Record{}, false, err
	}
	for range 3 {
		ok, err := s.rdb.SetNX(ctx, k, val, IdempotencyTTL).Result()
		if err != nil {
			return Record{}, false, fmt.Errorf("claim idempotency key: %w", err)
		}
		if ok {
			return Record{}, true, nil
		}
		v, err := s.rdb.Get(ctx, k).Bytes()
		if errors.Is(err, redis.Nil) { // released between the two calls: try again
			continue
		}
		if err != nil {
			return Record{}, false, fmt.Errorf("read idempotency key: %w", err)
		}
		existing, err := decodeRecord(v)
		return existing, false, err
	}
	return Record{}, false, fmt.Errorf("claim idempotency key: released and taken repeatedly")
}

// takeOverScript replaces KEYS[1] with ARGV[2] only while it holds ARGV[1].
var takeOverScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
  return 1
end
return 0`)

// TakeOver implements IdempotencyStore.
func (s *RedisIdempotency) TakeOver(ctx context.Context, key string, old, rec Record) error {
	o, err := encodeRecord(old)
	if err != nil {
		return err
	}
	n, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	ok, err := takeOverScript.Run(ctx, s.rdb, []string{s.prefix + key}, o, n, IdempotencyTTL.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("take over idempotency key: %w", err)
	}
	if ok != 1 {
		return ErrClaimLost
	}
	return nil
}

// Complete implements IdempotencyStore. Replicas read the result at once,
// so what a venue deferred to ctx's barrier is made durable first.
func (s *RedisIdempotency) Complete(ctx context.Context, key string, rec Record) error {
	if err := appendlog.BarrierFrom(ctx).Wait(); err != nil {
		return err
	}
	val, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	if err := s.rdb.Set(ctx, s.prefix+key, val, IdempotencyTTL).Err(); err != nil {
		return fmt.Errorf("store idempotent result: %w", err)
	}
	return nil
}

// Release implements IdempotencyStore.
func (s *RedisIdempotency) Release(ctx context.Context, key string) error {
	if err := s.rdb.Del(ctx, s.prefix+key).Err(); err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// GuardIdempotency refuses every claim on store while guard returns an
// error: a store that may drop records (a Redis that evicts) cannot keep
// the one-order-per-clientOrderId promise, so nothing is placed.
func GuardIdempotency(store IdempotencyStore, guard func() error) IdempotencyStore {
	return guardedIdempotency{IdempotencyStore: store, guard: guard}
}

type guardedIdempotency struct {
	IdempotencyStore
	guard func() error
}

// errStoreRefused is a guard's refusal, told apart from an outage.
type errStoreRefused struct{ error }

func (g guardedIdempotency) Claim(ctx context.Context, key string, rec Record) (Record, bool, error) {
	if err := g.guard(); err != nil {
		return Record{}, false, errStoreRefused{err}
	}
	return g.IdempotencyStore.Claim(ctx, key, rec)
}

// Lookup returns the live record of key, if any (a restart uses it to
// settle what the audit trail left PENDING).
func (s *MemoryIdempotency) Lookup(key string) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok, err := s.lookup(key)
	if err != nil || !ok || !s.now().Before(e.expires) {
		return Record{}, false
	}
	rec, err := e.record()
	return rec, err == nil
}

// diskRef is where a record's log line is: in seg (nil: nowhere), n
// bytes from off.
type diskRef struct {
	seg *segment
	off int64
	n   int32
}

// record returns e's record, read from disk when it is kept there.
func (e memEntry) record() (Record, error) {
	if e.ref.seg == nil {
		return e.rec, nil
	}
	_, rec, err := e.ref.seg.readLine(e.ref.off, e.ref.n)
	return rec, err
}
