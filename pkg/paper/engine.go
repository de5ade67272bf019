package paper

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// maxCatchUp bounds how many seconds of walk one call replays; after a
// longer idle period the walk resumes from where it was, as if paused.
const maxCatchUp = 86400

// Engine is a simulated perpetual-futures exchange. It is safe for
// concurrent use; every method takes one mutex. A call that changes state
// journals it under the mutex and waits for the journal to make it durable
// after releasing it (unlockDurable), so concurrent calls share fsyncs.
type Engine struct {
	mu       sync.Mutex
	cfg      Config
	markets  map[string]*market
	ordered  []*market
	accounts map[string]*account
	lastStep int64 // Unix second of the last walk step
	orderSeq uint64
	fillSeq  uint64

	journal   Journal  // nil: nothing is recorded
	replaying bool     // Reopen is replaying the journal
	written   uint64   // journal position of the last record written
	archive   archiver // nil: closed orders beyond maxClosedOrders are forgotten
	// snapFailed counts the snapshots that failed since the last one taken,
	// and snapLogged is when that was last logged.
	snapFailed int
	snapLogged time.Time
	// notes are the callers' lines replay found in the journal (Notes).
	notes [][]byte

	// changed is closed (and replaced) when a mark is set, so streams
	// push the new price at once rather than at their next interval.
	changed chan struct{}

	sink func(Event) // OnEvent's; nil: no events
}

// Changed returns a channel closed at the next SetMarkPrice.
func (e *Engine) Changed() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed
}

// notify wakes the waiters of Changed; e.mu is held.
func (e *Engine) notify() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// New returns an engine with cfg's defaults filled in. Markets with an empty
// or duplicate symbol or a non-positive start price, tick or lot size are
// skipped.
func New(cfg Config) *Engine {
	cfg = cfg.withDefaults()
	e := &Engine{
		cfg:      cfg,
		markets:  make(map[string]*market),
		accounts: make(map[string]*account),
		lastStep: cfg.Now().Unix(),
		orderSeq: 100000000,
		fillSeq:  500000000,
		changed:  make(chan struct{}),
	}
	for _, spec := range cfg.Markets {
		key := strings.ToUpper(spec.Symbol)
		if key == "" || e.markets[key] != nil || spec.StartPrice.Sign() <= 0 ||
			spec.TickSize.Sign() <= 0 || spec.LotSize.Sign() <= 0 {
			continue
		}
		if spec.MaxLeverage <= 0 || spec.MaxLeverage > cfg.MaxLeverage {
			spec.MaxLeverage = cfg.MaxLeverage
		}
		salt := hash(uint64(cfg.Seed), strHash(key))
		pcg := rand.NewPCG(salt, uint64(cfg.Seed))
		m := &market{
			spec:   spec,
			salt:   salt,
			pcg:    pcg,
			rng:    rand.New(pcg),
			mark:   floorTo(spec.StartPrice, spec.TickSize),
			start:  e.lastStep,
			active: newMarketOrders(),
		}
		if m.mark.Sign() <= 0 {
			m.mark = spec.TickSize
		}
		m.index = m.mark
		m.firstOpen = m.mark
		m.record(e.lastStep, m.mark, decimal.Zero)
		e.markets[key] = m
		e.ordered = append(e.ordered, m)
	}
	return e
}

// lock takes the mutex and replays the walk up to now. Callers unlock.
func (e *Engine) lock() time.Time {
	e.mu.Lock()
	now := e.cfg.Now()
	e.advance(now.Unix())
	return now
}

// advance replays one walk step per elapsed second, in time order across
// markets so fills and funding are deterministic.
func (e *Engine) advance(target int64) {
	if target <= e.lastStep {
		return
	}
	if target-e.lastStep > maxCatchUp {
		e.lastStep = target - maxCatchUp
	}
	interval := int64(e.cfg.FundingInterval / time.Second)
	for t := e.lastStep + 1; t <= target; t++ {
		for _, m := range e.ordered {
			m.step(t)
			if t%interval == 0 {
				e.applyFunding(m, t)
			}
			e.checkOrders(m, t)
		}
	}
	e.lastStep = target
}

func (e *Engine) market(symbol string) (*market, error) {
	m := e.markets[strings.ToUpper(symbol)]
	if m == nil {
		return nil, fmt.Errorf("market %q: %w", symbol, ErrUnknownMarket)
	}
	return m, nil
}

func (e *Engine) nextOrderID() string {
	e.orderSeq++
	return strconv.FormatUint(e.orderSeq, 10)
}

func (e *Engine) nextFillID() string {
	e.fillSeq++
	return strconv.FormatUint(e.fillSeq, 10)
}

// Fees returns the maker and taker fees.
func (e *Engine) Fees() Fees {
	return Fees{MakerBps: e.cfg.MakerFeeBps, TakerBps: e.cfg.TakerFeeBps}
}

// Now returns the engine's clock reading.
func (e *Engine) Now() time.Time { return e.cfg.Now() }

// MarketSymbols returns the listed symbols in configuration order.
func (e *Engine) MarketSymbols() []string {
	out := make([]string, len(e.ordered))
	for i, m := range e.ordered {
		out[i] = m.spec.Symbol
	}
	return out
}

func (e *Engine) sortedAccounts() []*account {
	out := make([]*account, 0, len(e.accounts))
	for _, a := range e.accounts {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// hash mixes its inputs with the splitmix64 finalizer.
func hash(xs ...uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, x := range xs {
		h ^= x
		h += 0x9e3779b97f4a7c15
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
		h = (h ^ (h >> 27)) * 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

func strHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// floorTo rounds x down to a multiple of step.
func floorTo(x, step decimal.Decimal) decimal.Decimal {
	q, _ := x.QuoRem(step, 0)
	return q.Mul(step)
}

// ceilTo rounds x up to a multiple of step.
func ceilTo(x, step decimal.Decimal) decimal.Decimal {
	f := floorTo(x, step)
	if f.LessThan(x) {
		return f.Add(step)
	}
	return f
}

// nearestTo rounds x to the nearest multiple of step.
func nearestTo(x, step decimal.Decimal) decimal.Decimal {
	return floorTo(x.Add(step.Div(decimal.NewFromInt(2))), step)
}

func isMultiple(x, step decimal.Decimal) bool {
	_, r := x.QuoRem(step, 0)
	return r.IsZero()
}
