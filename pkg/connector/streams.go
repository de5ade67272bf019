package connector

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/telemetry"
)

// streams is a runtime's market-data views, one feed per network, made on
// the first read. Nil (adapter without Streamer, no NATS, disabled) answers
// nothing, so every read goes to REST.
type streams struct {
	cfg      StreamConfig
	x        contract.Exchange
	st       Streamer
	nc       *nats.Conn
	subjects contract.Subjects
	log      *slog.Logger
	now      func() time.Time
	metrics  *telemetry.Metrics // nil-safe

	ctx    context.Context // the lifetime of every feed; cancelled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	feeds  map[contract.Environment]*feed
	closed bool
}

func newStreams(cfg StreamConfig, a Adapter, nc *nats.Conn, subjects contract.Subjects, log *slog.Logger, now func() time.Time,
	metrics *telemetry.Metrics) *streams {
	st, ok := a.(Streamer)
	if !ok || nc == nil || cfg.Disabled {
		return nil
	}
	cfg = cfg.withDefaults()
	if cfg.Replica == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		cfg.Replica = hex.EncodeToString(b[:])
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &streams{cfg: cfg, x: a.Exchange(), st: st, nc: nc, subjects: subjects, log: log.With("component", "stream"),
		now: now, metrics: metrics, ctx: ctx, cancel: cancel, feeds: map[contract.Environment]*feed{}}
}

// close stops every feed: a holder closes its sockets and gives up its lease.
func (s *streams) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	feeds := s.feeds
	s.feeds = map[contract.Environment]*feed{}
	s.mu.Unlock()
	s.cancel()
	for _, f := range feeds {
		for _, sub := range f.subs {
			_ = sub.Unsubscribe()
		}
	}
	s.wg.Wait()
}

// feed is one network's view on this replica, with the markets this
// replica was asked for (its demand, repeated to the holder).
type feed struct {
	s    *streams
	env  contract.Environment
	root string
	view *view
	subs []*nats.Subscription

	holding atomic.Bool // this replica holds the sockets

	mu    sync.Mutex
	reads map[string]time.Time // native -> last read here
}

// HoldsStreams reports whether this replica holds the market-data sockets
// of any network (for health pages and tests).
func (r *Runtime) HoldsStreams() bool {
	s := r.streams
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.feeds {
		if f.holding.Load() {
			return true
		}
	}
	return false
}

func (s *streams) feed(env contract.Environment) *feed {
	if s == nil || env == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.feeds[env]; f != nil || s.closed {
		return f
	}
	f := &feed{s: s, env: env, root: s.subjects.Stream(s.x, env), view: newView(), reads: map[string]time.Time{}}
	for _, subj := range []string{f.root + ".m.*", f.root + ".beat"} {
		sub, err := s.nc.Subscribe(subj, func(m *nats.Msg) {
			if at := f.view.apply(m.Data); at > 0 {
				s.metrics.ObserveStreamLag(string(s.x), string(env), s.now().Sub(time.UnixMilli(at)))
			}
		})
		if err != nil {
			for _, sub := range f.subs {
				_ = sub.Unsubscribe()
			}
			s.log.Warn("stream view not subscribed; reads use REST", "env", env, "err", err)
			return nil
		}
		f.subs = append(f.subs, sub)
	}
	if sub, err := s.nc.Subscribe(f.root+".ask", func(*nats.Msg) { f.repeat() }); err == nil {
		f.subs = append(f.subs, sub)
	}
	s.feeds[env] = f
	s.wg.Add(2)
	go func() { defer s.wg.Done(); f.repeatDemand(s.ctx) }()
	go func() { defer s.wg.Done(); f.contend(s.ctx) }()
	return f
}

// touch records a read of native; a market read for the first time is
// asked for at once, later ones ride the periodic repeat.
func (f *feed) touch(native ...string) {
	now := f.s.now()
	var fresh []string
	f.mu.Lock()
	for _, n := range native {
		if _, ok := f.reads[n]; !ok {
			fresh = append(fresh, n)
		}
		f.reads[n] = now
	}
	f.mu.Unlock()
	if len(fresh) > 0 {
		f.want(fresh)
	}
}

type wantMsg struct {
	Markets []string `json:"markets"`
}

func (f *feed) want(markets []string) {
	data, _ := json.Marshal(wantMsg{Markets: markets})
	_ = f.s.nc.Publish(f.root+".want", data)
}

// repeatDemand tells the holder, whoever it is now, which markets this
// replica still reads, and forgets those idle for longer than cfg.Idle.
func (f *feed) repeatDemand(ctx context.Context) {
	t := time.NewTicker(f.s.cfg.Beat * 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f.repeat()
	}
}

// repeat sends this replica's demand, dropping markets idle past cfg.Idle.
func (f *feed) repeat() {
	now := f.s.now()
	var list []string
	f.mu.Lock()
	for n, at := range f.reads {
		if now.Sub(at) > f.s.cfg.Idle {
			delete(f.reads, n)
			continue
		}
		list = append(list, n)
	}
	f.mu.Unlock()
	if len(list) > 0 {
		f.want(list)
	}
}

// subjectToken makes a native symbol safe as one subject token.
func subjectToken(native string) string {
	return strings.NewReplacer(".", "_", "*", "_", ">", "_", " ", "_").Replace(native)
}

// The reads, nil-safe: false sends the caller to REST.

func (s *streams) markPrice(env contract.Environment, m Market) (contract.MarkPriceResult, bool) {
	f := s.feed(env)
	if f == nil {
		return contract.MarkPriceResult{}, false
	}
	f.touch(m.Native)
	return f.view.markPrice(s.now(), s.cfg.PriceStale, m.Native)
}

func (s *streams) fundingRate(env contract.Environment, m Market) (contract.FundingRateResult, bool) {
	f := s.feed(env)
	if f == nil {
		return contract.FundingRateResult{}, false
	}
	f.touch(m.Native)
	return f.view.fundingRate(s.now(), s.cfg.PriceStale, m.Native)
}

func (s *streams) orderbook(env contract.Environment, m Market, depth int) (contract.OrderbookResult, bool) {
	f := s.feed(env)
	if f == nil {
		return contract.OrderbookResult{}, false
	}
	f.touch(m.Native)
	return f.view.orderbook(s.now(), s.cfg.BookStale, m.Native, depth)
}

func (s *streams) marketsWithFunding(env contract.Environment, list []Market) (contract.MarketsResult, bool) {
	f := s.feed(env)
	if f == nil {
		return contract.MarketsResult{}, false
	}
	natives := make([]string, len(list))
	for i, m := range list {
		natives[i] = m.Native
	}
	f.touch(natives...)
	return f.view.marketsWithFunding(s.now(), s.cfg.PriceStale, list)
}
