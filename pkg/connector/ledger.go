package connector

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"
)

// NotionalLedger sums, per key and UTC day, the notional of the orders the
// key placed, for the maxDailyNotional guard. Entries are named by the
// order (credential and clientOrderId), so a retry of an order counts once.
// A shared ledger (Redis) makes the cap hold across connector replicas and
// exchanges.
type NotionalLedger interface {
	// Reserve adds amount for id unless that would take the day's total
	// above limit; an id already there is allowed again and adds nothing.
	// It returns the day's total after the call.
	Reserve(ctx context.Context, scope, day, id string, amount, limit decimal.Decimal) (total decimal.Decimal, ok bool, err error)
	// Used is the day's total.
	Used(ctx context.Context, scope, day string) (decimal.Decimal, error)
	// Release removes id's amount: its order was certainly not placed.
	Release(ctx context.Context, scope, day, id string) error
}

// ledgerDay names the UTC day of t, the unit maxDailyNotional counts in.
func ledgerDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// MemoryLedger is an in-process NotionalLedger; NewFileLedger adds a log
// on disk to it.
type MemoryLedger struct {
	mu   sync.Mutex
	days map[string]*ledgerEntry // scope + " " + day
}

type ledgerEntry struct {
	total decimal.Decimal
	ids   map[string]decimal.Decimal
}

// NewMemoryLedger returns an empty ledger.
func NewMemoryLedger() *MemoryLedger { return &MemoryLedger{days: map[string]*ledgerEntry{}} }

// Reserve implements NotionalLedger.
func (l *MemoryLedger) Reserve(_ context.Context, scope, day, id string, amount, limit decimal.Decimal) (decimal.Decimal, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(scope, day)
	if _, ok := e.ids[id]; ok {
		return e.total, true, nil
	}
	if e.total.Add(amount).GreaterThan(limit) {
		return e.total, false, nil
	}
	e.ids[id] = amount
	e.total = e.total.Add(amount)
	return e.total, true, nil
}

// Used implements NotionalLedger.
func (l *MemoryLedger) Used(_ context.Context, scope, day string) (decimal.Decimal, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.days[scope+" "+day]; ok {
		return e.total, nil
	}
	return decimal.Zero, nil
}

// Release implements NotionalLedger.
func (l *MemoryLedger) Release(_ context.Context, scope, day, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.release(scope, day, id)
	return nil
}

func (l *MemoryLedger) release(scope, day, id string) {
	e, ok := l.days[scope+" "+day]
	if !ok {
		return
	}
	if amt, ok := e.ids[id]; ok {
		e.total = e.total.Sub(amt)
		delete(e.ids, id)
	}
}

func (l *MemoryLedger) entry(scope, day string) *ledgerEntry {
	k := scope + " " + day
	e, ok := l.days[k]
	if !ok {
		e = &ledgerEntry{ids: map[string]decimal.Decimal{}}
		l.days[k] = e
	}
	return e
}

// FileLedger is a MemoryLedger that appends every change to a file and
// replays it on open, so the standalone gateway keeps today's totals
// across restarts. Days before yesterday are dropped on open.
type FileLedger struct {
	*MemoryLedger
	mu  sync.Mutex
	log *appendlog.File
}

type ledgerLine struct {
	Scope  string          `json:"s"`
	Day    string          `json:"d"`
	ID     string          `json:"i"`
	Amount decimal.Decimal `json:"a"`
	Drop   bool            `json:"x,omitempty"`
}

// NewFileLedger opens (or creates) the ledger log at path.
func NewFileLedger(path string, now func() time.Time) (*FileLedger, error) {
	if now == nil {
		now = time.Now
	}
	mem := NewMemoryLedger()
	keep := ledgerDay(now().Add(-24 * time.Hour))
	var kept []ledgerLine
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var ln ledgerLine
			if json.Unmarshal(sc.Bytes(), &ln) != nil || ln.Day < keep {
				continue // a torn last line after a crash, or an old day
			}
			kept = append(kept, ln)
			if ln.Drop {
				mem.release(ln.Scope, ln.Day, ln.ID)
				continue
			}
			e := mem.entry(ln.Scope, ln.Day)
			if _, dup := e.ids[ln.ID]; !dup {
				e.ids[ln.ID], e.total = ln.Amount, e.total.Add(ln.Amount)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read notional ledger %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("open notional ledger: %w", err)
	}
	// Rewrite without old days, then append from there.
	tmp := path + ".tmp"
	w, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open notional ledger: %w", err)
	}
	enc := json.NewEncoder(w)
	for _, ln := range kept {
		_ = enc.Encode(ln)
	}
	if err := errors.Join(w.Sync(), w.Close(), os.Rename(tmp, path)); err != nil {
		return nil, fmt.Errorf("rewrite notional ledger: %w", err)
	}
	log, err := appendlog.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open notional ledger: %w", err)
	}
	return &FileLedger{MemoryLedger: mem, log: log}, nil
}

// Reserve implements NotionalLedger and logs an accepted reservation. It
// answers once the reservation is on disk; the log's fsync is shared with
// concurrent reservations, so l.mu is not held across it.
func (l *FileLedger) Reserve(ctx context.Context, scope, day, id string, amount, limit decimal.Decimal) (decimal.Decimal, bool, error) {
	l.mu.Lock()
	before, _ := l.MemoryLedger.Used(ctx, scope, day)
	total, ok, err := l.MemoryLedger.Reserve(ctx, scope, day, id, amount, limit)
	if err != nil || !ok || total.Equal(before) {
		l.mu.Unlock()
		return total, ok, err
	}
	pos, err := l.write(ledgerLine{Scope: scope, Day: day, ID: id, Amount: amount})
	if err != nil {
		_ = l.MemoryLedger.Release(ctx, scope, day, id)
		l.mu.Unlock()
		return before, false, err
	}
	l.mu.Unlock()
	if err := l.sync(pos); err != nil {
		// Not durable: the placement is refused, so its amount is not used.
		_ = l.MemoryLedger.Release(ctx, scope, day, id)
		return before, false, err
	}
	return total, true, nil
}

// Release implements NotionalLedger.
func (l *FileLedger) Release(ctx context.Context, scope, day, id string) error {
	l.mu.Lock()
	_ = l.MemoryLedger.Release(ctx, scope, day, id)
	pos, err := l.write(ledgerLine{Scope: scope, Day: day, ID: id, Drop: true})
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return l.sync(pos)
}

func (l *FileLedger) write(ln ledgerLine) (uint64, error) {
	b, _ := json.Marshal(ln)
	pos, err := l.log.Write(b)
	if err != nil {
		return 0, fmt.Errorf("write notional ledger: %w", err)
	}
	return pos, nil
}

func (l *FileLedger) sync(pos uint64) error {
	if err := l.log.Sync(pos); err != nil {
		return fmt.Errorf("write notional ledger: %w", err)
	}
	return nil
}

// Close closes the log.
func (l *FileLedger) Close() error { return l.log.Close() }

// RedisLedger is a NotionalLedger shared by every connector on one Redis:
// one hash per key and day, amounts in millionths of the quote currency
// (integers, so Redis adds them exactly).
type RedisLedger struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisLedger returns a ledger under prefix (e.g. "perpgate:notional:").
func NewRedisLedger(rdb redis.UniversalClient, prefix string) *RedisLedger {
	return &RedisLedger{rdb: rdb, prefix: prefix}
}

var million = decimal.NewFromInt(1_000_000)

// MaxLedgerNotional is the most the notional ledger counts per key and
// day: 9e9 in millionths stays below 2^53, so Redis adds and compares it
// exactly (Lua numbers are doubles) and a total never wraps.
var MaxLedgerNotional = decimal.NewFromInt(9_000_000_000)

// errLedgerRange is an amount beyond MaxLedgerNotional.
var errLedgerRange = errors.New("amount beyond the notional ledger's range")

// micros is amount in millionths, rounded up so the cap is never passed by
// rounding.
func micros(amount decimal.Decimal) int64 { return amount.Mul(million).Ceil().IntPart() }

func fromMicros(n int64) decimal.Decimal { return decimal.New(n, -6) }

// ledgerTTL keeps a day's hash until the day after it has ended.
const ledgerTTL = 48 * time.Hour

var reserveScript = redis.NewScript(`
local field = 'o:' .. ARGV[1]
if redis.call('HEXISTS', KEYS[1], field) == 1 then
  return {1, redis.call('HGET', KEYS[1], 'total') or '0'}
end
local total = tonumber(redis.call('HGET', KEYS[1], 'total') or '0')
if total + tonumber(ARGV[2]) > tonumber(ARGV[3]) then
  return {0, redis.call('HGET', KEYS[1], 'total') or '0'}
end
redis.call('HSET', KEYS[1], field, ARGV[2])
redis.call('HINCRBY', KEYS[1], 'total', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {1, redis.call('HGET', KEYS[1], 'total')}
`)

var releaseScript = redis.NewScript(`
local field = 'o:' .. ARGV[1]
local amt = redis.call('HGET', KEYS[1], field)
if amt then
  redis.call('HINCRBY', KEYS[1], 'total', -tonumber(amt))
  redis.call('HDEL', KEYS[1], field)
end
return 1
`)

func (l *RedisLedger) key(scope, day string) string { return l.prefix + scope + ":" + day }

// Reserve implements NotionalLedger.
func (l *RedisLedger) Reserve(ctx context.Context, scope, day, id string, amount, limit decimal.Decimal) (decimal.Decimal, bool, error) {
	if amount.IsNegative() || amount.GreaterThan(MaxLedgerNotional) {
		return decimal.Zero, false, fmt.Errorf("reserve daily notional %s: %w", amount, errLedgerRange)
	}
	limit = decimal.Min(limit, MaxLedgerNotional)
	res, err := reserveScript.Run(ctx, l.rdb, []string{l.key(scope, day)},
		id, micros(amount), limit.Mul(million).Floor().IntPart(), int(ledgerTTL.Seconds())).Slice()
	if err != nil || len(res) != 2 {
		return decimal.Zero, false, fmt.Errorf("reserve daily notional: %w", err)
	}
	ok, _ := res[0].(int64)
	s, _ := res[1].(string)
	n, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero, false, fmt.Errorf("reserve daily notional: total %q: %w", s, err)
	}
	return fromMicros(n.IntPart()), ok == 1, nil
}

// Used implements NotionalLedger.
func (l *RedisLedger) Used(ctx context.Context, scope, day string) (decimal.Decimal, error) {
	n, err := l.rdb.HGet(ctx, l.key(scope, day), "total").Int64()
	if errors.Is(err, redis.Nil) {
		return decimal.Zero, nil
	}
	if err != nil {
		return decimal.Zero, fmt.Errorf("read daily notional: %w", err)
	}
	return fromMicros(n), nil
}

// Release implements NotionalLedger.
func (l *RedisLedger) Release(ctx context.Context, scope, day, id string) error {
	return releaseScript.Run(ctx, l.rdb, []string{l.key(scope, day)}, id).Err()
}
