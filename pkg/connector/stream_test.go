package connector

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// streamVenue answers REST reads with mark 100 and streams mark 101 every
// tick to each market subscribed on its latest socket; it counts REST
// calls, dials and snapshot calls.
type streamVenue struct {
	venueFake
	mu        sync.Mutex
	rest      int
	dials     int
	snapshots int
	snapshot  BookUpdate
	silent    bool
	conns     []*fakeConn
}

func (v *streamVenue) GetMarkPrice(context.Context, Credential, Market) (contract.MarkPriceResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rest++
	return contract.MarkPriceResult{MarkPrice: decimal.NewFromInt(100), IndexPrice: decimal.NewFromInt(100)}, nil
}

func (v *streamVenue) GetOrderbook(context.Context, Credential, Market, int) (contract.OrderbookResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rest++
	return contract.OrderbookResult{}, nil
}

func (v *streamVenue) DialStream(context.Context, contract.Environment) (StreamConn, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.dials++
	c := &fakeConn{v: v, frames: make(chan StreamEvent, 64), done: make(chan struct{}), subs: map[string]bool{}}
	v.conns = append(v.conns, c)
	go c.tick()
	return c, nil
}

func (v *streamVenue) BookSnapshot(context.Context, contract.Environment, string, int) (BookUpdate, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.snapshots++
	return v.snapshot, nil
}

func (v *streamVenue) counts() (rest, dials, snapshots int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.rest, v.dials, v.snapshots
}

func (v *streamVenue) latest() *fakeConn {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.conns) == 0 {
		return nil
	}
	return v.conns[len(v.conns)-1]
}

func (v *streamVenue) setSilent(s bool) {
	v.mu.Lock()
	v.silent = s
	v.mu.Unlock()
}

type fakeConn struct {
	v      *streamVenue
	frames chan StreamEvent
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	subs   map[string]bool
}

func (c *fakeConn) tick() {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		c.v.mu.Lock()
		silent := c.v.silent
		c.v.mu.Unlock()
		if silent {
			continue
		}
		for _, m := range c.subscribed() {
			c.push(StreamEvent{Market: m, Mark: &MarkUpdate{MarkPrice: decimal.NewNullDecimal(decimal.NewFromInt(101)),
				IndexPrice: decimal.NewNullDecimal(decimal.NewFromInt(101))}})
		}
	}
}

func (c *fakeConn) push(ev StreamEvent) {
	select {
	case c.frames <- ev:
	case <-c.done:
	}
}

func (c *fakeConn) subscribed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for m := range c.subs {
		out = append(out, m)
	}
	return out
}

func (c *fakeConn) Subscribe(_ context.Context, markets []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range markets {
		c.subs[m] = true
	}
	return nil
}

func (c *fakeConn) Unsubscribe(_ context.Context, markets []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range markets {
		delete(c.subs, m)
	}
	return nil
}

func (c *fakeConn) Next(ctx context.Context) (StreamEvent, error) {
	select {
	case ev := <-c.frames:
		return ev, nil
	case <-c.done:
		return StreamEvent{}, errors.New("socket closed")
	case <-ctx.Done():
		return StreamEvent{}, ctx.Err()
	}
}

// Close is also how a test drops the socket from the venue's side.
func (c *fakeConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

var streamCred = Credential{CredentialInfo: contract.CredentialInfo{ID: "cred-1", Environment: contract.Testnet}}

// streamRuntime is one connector replica on its own NATS connection.
func streamRuntime(t *testing.T, url, prefix string, v Adapter, sc StreamConfig) (*Runtime, *nats.Conn) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cfg := DefaultConfig()
	cfg.Subjects = contract.NewSubjects(prefix)
	cfg.Stream = sc
	r := New(cfg, v, nc, NewMemoryIdempotency(nil), slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { r.streams.close() })
	return r, nc
}

func newStreamVenue() *streamVenue {
	return &streamVenue{venueFake: venueFake{orders: map[string]FoundOrder{}}}
}

func readMark(t *testing.T, r *Runtime) contract.MarkPriceResult {
	t.Helper()
	d := dispatch{r: r, cred: streamCred}
	m, err := d.market(context.Background(), "BTC")
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.markPrice(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// eventually polls cond until it holds, failing t after within.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testenv.Poll(t, what, within, func() error {
		if cond() {
			return nil
		}
		return errors.New("not yet")
	})
}

func fromStream(res contract.MarkPriceResult) bool {
	return res.MarkPrice.Equal(decimal.NewFromInt(101))
}

// TestStreamServesCachedAfterFirstRead: the first read goes to REST and
// subscribes; later reads come from the view without calling REST.
func TestStreamServesCachedAfterFirstRead(t *testing.T) {
	url := testenv.EmbeddedNATS(t).ClientURL()
	v := newStreamVenue()
	r, _ := streamRuntime(t, url, testenv.Prefix(t), v, StreamConfig{})
	before := time.Now().UnixMilli()
	if res := readMark(t, r); fromStream(res) || res.AsOf < before || res.AsOf > time.Now().UnixMilli() {
		t.Fatalf("first read = %+v, want REST's 100 with asOf of its receipt", res)
	}
	eventually(t, 5*time.Second, "stream view answers", func() bool { return fromStream(readMark(t, r)) })
	rest, dials, _ := v.counts()
	for range 1000 {
		res := readMark(t, r)
		if !fromStream(res) {
			t.Fatalf("read fell back to REST: %+v", res)
		}
		if age := time.Now().UnixMilli() - res.AsOf; age < 0 || age > 2000 {
			t.Fatalf("asOf %d is %d ms from now", res.AsOf, age)
		}
	}
	if got, _, _ := v.counts(); got != rest {
		t.Fatalf("REST calls went from %d to %d while the view was fresh", rest, got)
	}
	if dials != 1 {
		t.Fatalf("dials = %d, want 1", dials)
	}
}

// TestStreamStaleFallsBackToREST: a socket that stops sending anything
// (no frames, no heartbeats) makes reads go to REST once the bound passes.
func TestStreamStaleFallsBackToREST(t *testing.T) {
	url := testenv.EmbeddedNATS(t).ClientURL()
	v := newStreamVenue()
	r, _ := streamRuntime(t, url, testenv.Prefix(t), v, StreamConfig{PriceStale: 300 * time.Millisecond})
	readMark(t, r)
	eventually(t, 5*time.Second, "stream view answers", func() bool { return fromStream(readMark(t, r)) })
	v.setSilent(true)
	silentAt := time.Now()
	eventually(t, 2*time.Second, "REST answers once the view is stale", func() bool { return !fromStream(readMark(t, r)) })
	if waited := time.Since(silentAt); waited < 250*time.Millisecond {
		t.Fatalf("fell back after %v, before the 300 ms bound", waited)
	}
	v.setSilent(false)
	eventually(t, 2*time.Second, "stream view answers again", func() bool { return fromStream(readMark(t, r)) })
}

// TestStreamReconnectsAfterDrop: the venue drops the socket; the holder
// dials again, subscribes the same market, and reads come from the view.
func TestStreamReconnectsAfterDrop(t *testing.T) {
	url := testenv.EmbeddedNATS(t).ClientURL()
	v := newStreamVenue()
	r, _ := streamRuntime(t, url, testenv.Prefix(t), v, StreamConfig{})
	readMark(t, r)
	eventually(t, 5*time.Second, "stream view answers", func() bool { return fromStream(readMark(t, r)) })
	_ = v.latest().Close()
	eventually(t, 5*time.Second, "second dial", func() bool { _, d, _ := v.counts(); return d == 2 })
	eventually(t, 5*time.Second, "market subscribed again", func() bool {
		s := v.latest().subscribed()
		return len(s) == 1 && s[0] == "BTC"
	})
	eventually(t, 5*time.Second, "stream view answers after reconnect", func() bool { return fromStream(readMark(t, r)) })
}

func lvl(p, s int64) contract.Level {
	return contract.Level{decimal.NewFromInt(p), decimal.NewFromInt(s)}
}

// TestStreamBookGapResyncs: changes carry Binance's pu/u numbers; a missing
// one makes the holder read a REST snapshot and continue from it.
func TestStreamBookGapResyncs(t *testing.T) {
	url := testenv.EmbeddedNATS(t).ClientURL()
	v := newStreamVenue()
	v.snapshot = BookUpdate{Seq: 10, Bids: []contract.Level{lvl(99, 1)}, Asks: []contract.Level{lvl(101, 1)}}
	r, _ := streamRuntime(t, url, testenv.Prefix(t), v, StreamConfig{})
	d := dispatch{r: r, cred: streamCred}
	m, _ := d.market(context.Background(), "BTC")
	book := func() contract.OrderbookResult {
		res, err := d.orderbook(context.Background(), m, 5)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	book()
	eventually(t, 5*time.Second, "subscribed", func() bool { c := v.latest(); return c != nil && len(c.subscribed()) == 1 })
	c := v.latest()
	// The first change has no book to continue: the holder takes a snapshot.
	c.push(StreamEvent{Market: "BTC", Book: &BookUpdate{First: 9, Seq: 11, Prev: 8, Bids: []contract.Level{lvl(98, 2)}}})
	eventually(t, 5*time.Second, "book from snapshot and change", func() bool { return len(book().Bids) == 2 })
	c.push(StreamEvent{Market: "BTC", Book: &BookUpdate{First: 12, Seq: 12, Prev: 11, Bids: []contract.Level{lvl(99, 0)}}})
	eventually(t, 5*time.Second, "level removed", func() bool { return len(book().Bids) == 1 })
	if _, _, s := v.counts(); s != 1 {
		t.Fatalf("snapshots = %d before any gap, want 1", s)
	}
	v.mu.Lock()
	v.snapshot = BookUpdate{Seq: 20, Bids: []contract.Level{lvl(97, 3)}, Asks: []contract.Level{lvl(102, 1)}}
	v.mu.Unlock()
	c.push(StreamEvent{Market: "BTC", Book: &BookUpdate{First: 15, Seq: 21, Prev: 14, Asks: []contract.Level{lvl(103, 1)}}})
	eventually(t, 5*time.Second, "resynced from the second snapshot", func() bool {
		b := book()
		return len(b.Bids) == 1 && b.Bids[0][0].Equal(decimal.NewFromInt(97)) && len(b.Asks) == 2
	})
	if _, _, s := v.counts(); s != 2 {
		t.Fatalf("snapshots = %d after one gap, want 2", s)
	}
}

// TestStreamOneHolderAndHandover: two replicas read one market through one
// socket; when the holder dies (its NATS connection gone, no clean
// release) the other opens the socket within seconds.
func TestStreamOneHolderAndHandover(t *testing.T) {
	url := testenv.EmbeddedNATS(t).ClientURL()
	prefix := testenv.Prefix(t)
	va, vb := newStreamVenue(), newStreamVenue()
	sc := StreamConfig{LeaseTTL: time.Second}
	a, nca := streamRuntime(t, url, prefix, va, sc)
	b, ncb := streamRuntime(t, url, prefix, vb, sc)
	readMark(t, a)
	readMark(t, b)
	eventually(t, 5*time.Second, "replica a answers from the view", func() bool { return fromStream(readMark(t, a)) })
	eventually(t, 5*time.Second, "replica b answers from the view", func() bool { return fromStream(readMark(t, b)) })
	_, da, _ := va.counts()
	_, db, _ := vb.counts()
	if da+db != 1 {
		t.Fatalf("dials a=%d b=%d, want one socket between them", da, db)
	}
	kill, other, otherVenue := nca, b, vb
	if db == 1 {
		kill, other, otherVenue = ncb, a, va
	}
	killed := time.Now()
	kill.Close()
	// About 1.3 s on an idle machine; a cold `make test` on two cores,
	// with packages compiling beside it, has taken 5 s.
	eventually(t, 10*time.Second, "replica b holds the socket", func() bool { _, d, _ := otherVenue.counts(); return d == 1 })
	handover := time.Since(killed)
	eventually(t, 5*time.Second, "replica b answers from its own socket", func() bool { return fromStream(readMark(t, other)) })
	t.Logf("handover after %v (lease TTL %v)", handover.Round(time.Millisecond), sc.LeaseTTL)
	if handover > 8*time.Second {
		t.Fatalf("handover took %v", handover)
	}
}

// TestStreamCachedReadP99 measures getMarkPrice through dispatch (market
// resolution included) at concurrency 1 once the view is fresh; it fails
// when any read reaches REST, and reports the p99.
func TestStreamCachedReadP99(t *testing.T) {
	url := testenv.EmbeddedNATS(t).ClientURL()
	v := newStreamVenue()
	r, _ := streamRuntime(t, url, testenv.Prefix(t), v, StreamConfig{})
	readMark(t, r)
	eventually(t, 5*time.Second, "stream view answers", func() bool { return fromStream(readMark(t, r)) })
	rest, _, _ := v.counts()
	op, _ := contract.Lookup(contract.OpGetMarkPrice)
	d := dispatch{r: r, cred: streamCred}
	const n = 20000
	lat := make([]time.Duration, n)
	for i := range lat {
		start := time.Now()
		res, err := d.run(context.Background(), op, &contract.MarketParams{Market: "BTC-USD-PERP"})
		lat[i] = time.Since(start)
		if err != nil || !fromStream(res.(contract.MarkPriceResult)) {
			t.Fatalf("read %d: %v %+v", i, err, res)
		}
	}
	if got, _, _ := v.counts(); got != rest {
		t.Fatalf("REST calls went from %d to %d", rest, got)
	}
	slices.Sort(lat)
	t.Logf("cached getMarkPrice in the connector, concurrency 1: p50=%v p99=%v max=%v", lat[n/2], lat[n*99/100], lat[n-1])
}

// TestStreamSilentSocketRedialed: a socket that sends nothing, not even
// heartbeats, for Silence is dropped and dialled again.
func TestStreamSilentSocketRedialed(t *testing.T) {
	url := testenv.EmbeddedNATS(t).ClientURL()
	v := newStreamVenue()
	r, _ := streamRuntime(t, url, testenv.Prefix(t), v, StreamConfig{Silence: 400 * time.Millisecond})
	readMark(t, r)
	eventually(t, 5*time.Second, "stream view answers", func() bool { return fromStream(readMark(t, r)) })
	v.setSilent(true)
	eventually(t, 5*time.Second, "second dial", func() bool { _, d, _ := v.counts(); return d >= 2 })
	v.setSilent(false)
	eventually(t, 5*time.Second, "stream view answers after redial", func() bool { return fromStream(readMark(t, r)) })
}

// TestStreamIdleMarketUnsubscribed: a market nobody reads for Idle is
// unsubscribed and dropped from the views, so the next read goes to REST
// rather than answering the last price it had.
func TestStreamIdleMarketUnsubscribed(t *testing.T) {
	url := testenv.EmbeddedNATS(t).ClientURL()
	v := newStreamVenue()
	r, _ := streamRuntime(t, url, testenv.Prefix(t), v, StreamConfig{Idle: 300 * time.Millisecond})
	readMark(t, r)
	eventually(t, 5*time.Second, "stream view answers", func() bool { return fromStream(readMark(t, r)) })
	eventually(t, 5*time.Second, "the idle market is unsubscribed", func() bool { return len(v.latest().subscribed()) == 0 })
	// Well inside the 2 s bound: only the drop can send this read to REST.
	eventually(t, 500*time.Millisecond, "a read after the unsubscription goes to REST", func() bool {
		return !fromStream(readMark(t, r))
	})
	eventually(t, 5*time.Second, "subscribed again and answered from the view", func() bool { return fromStream(readMark(t, r)) })
}

// cappedVenue lists BTC and ETH but takes one market per socket.
type cappedVenue struct{ *streamVenue }

func (v cappedVenue) Markets(context.Context, Credential) ([]Market, error) {
	m := func(base string) Market {
		return Market{Canonical: base + "-USD-PERP", Native: base, Base: base, Quote: "USD", Multiplier: 1,
			TickSize: decimal.RequireFromString("0.1"), LotSize: decimal.RequireFromString("0.001")}
	}
	return []Market{m("BTC"), m("ETH")}, nil
}

func (v cappedVenue) MaxStreamMarkets() int { return 1 }

// TestStreamCapacity: past the venue's cap per socket a market is read over
// REST and never subscribed.
func TestStreamCapacity(t *testing.T) {
	url := testenv.EmbeddedNATS(t).ClientURL()
	v := cappedVenue{newStreamVenue()}
	r, _ := streamRuntime(t, url, testenv.Prefix(t), v, StreamConfig{})
	d := dispatch{r: r, cred: streamCred}
	read := func(market string) contract.MarkPriceResult {
		m, err := d.market(context.Background(), market)
		if err != nil {
			t.Fatal(err)
		}
		res, err := d.markPrice(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	read("BTC")
	eventually(t, 5*time.Second, "BTC from the stream", func() bool { return fromStream(read("BTC")) })
	read("ETH")
	for range 20 {
		if fromStream(read("ETH")) {
			t.Fatal("ETH answered from a stream past the cap")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s := v.latest().subscribed(); len(s) != 1 || s[0] != "BTC" {
		t.Fatalf("subscribed %v, want only BTC", s)
	}
}
