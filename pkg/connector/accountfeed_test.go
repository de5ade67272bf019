package connector

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// feedVenue is a venue with a private stream whose behaviour each test
// sets: follow runs one connection.
type feedVenue struct {
	venueFake
	mu      sync.Mutex
	follows int
	closed  int // connections ended by the runtime
	follow  func(n int, ready func(), emit func(AccountEvent)) error
	open    []contract.Order
	fills   []contract.Fill
	// failFills is how many GetFills calls fail before one answers.
	failFills int
}

func (v *feedVenue) Markets(context.Context, Credential) ([]Market, error) {
	return []Market{{Canonical: "BTC-USD-PERP", Native: "XBT", Base: "BTC", Quote: "USD", Multiplier: 1,
		TickSize: decimal.NewFromInt(1), LotSize: decimal.RequireFromString("0.001")}}, nil
}

func (v *feedVenue) FollowAccount(ctx context.Context, _ Credential, ready func(), emit func(AccountEvent)) error {
	v.mu.Lock()
	v.follows++
	n, follow := v.follows, v.follow
	v.mu.Unlock()
	if err := follow(n, ready, emit); err != nil {
		return err
	}
	<-ctx.Done()
	v.mu.Lock()
	v.closed++
	v.mu.Unlock()
	return ctx.Err()
}

func (v *feedVenue) GetOrders(context.Context, Credential, *Market) (contract.OrdersResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return contract.OrdersResult{Orders: append([]contract.Order{}, v.open...)}, nil
}

func (v *feedVenue) GetPositions(context.Context, Credential, *Market) (contract.PositionsResult, error) {
	return contract.PositionsResult{}, nil
}

func (v *feedVenue) GetFills(context.Context, Credential, Market, int) (contract.FillsResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.failFills > 0 {
		v.failFills--
		return contract.FillsResult{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "fills not answered")
	}
	return contract.FillsResult{Fills: append([]contract.Fill{}, v.fills...)}, nil
}

var feedCred = Credential{CredentialInfo: contract.CredentialInfo{ID: "cred-feed", AccountID: "acct", Exchange: contract.Paper,
	Environment: contract.Testnet}}

// feedRuntime starts a runtime on v with the credential's secret cached,
// and a reader of its events.
func feedRuntime(t *testing.T, v *feedVenue) (*Runtime, *nats.Conn, *events.Cursor) {
	return feedRuntimeIdle(t, v, time.Minute)
}

func feedRuntimeIdle(t *testing.T, v *feedVenue, idle time.Duration) (*Runtime, *nats.Conn, *events.Cursor) {
	t.Helper()
	url := testenv.EmbeddedNATS(t).ClientURL()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cfg := DefaultConfig()
	cfg.Subjects = contract.NewSubjects(testenv.Prefix(t))
	cfg.AccountFeeds = AccountFeedConfig{Beat: 200 * time.Millisecond, Idle: idle}
	r := New(cfg, v, nc, NewMemoryIdempotency(nil), slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.secrets.entries[feedCred.ID] = secretEntry{cred: feedCred, expires: time.Now().Add(time.Hour)}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	if r.feeds == nil {
		t.Fatal("no account feeds on a runtime whose adapter is an AccountFeeder")
	}
	reader, err := events.NewReader(nc, r.feeds.cfg.Events)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := reader.Follow(context.Background(), contract.Paper, feedCred.ID, nil, events.Where{After: 0, HasAfter: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cur.Close)
	return r, nc, cur
}

// askFeed asks for the credential's feed and waits until it is open.
func askFeed(t *testing.T, r *Runtime, nc *nats.Conn) error {
	t.Helper()
	data, _ := json.Marshal(interestMsg{CredentialID: feedCred.ID})
	_, err := nc.Request(r.cfg.Subjects.AccountFeedInterest(contract.Paper), data, 3*time.Second)
	return err
}

func nextEvent(t *testing.T, cur *events.Cursor, within time.Duration) (contract.Event, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	ev, err := cur.Next(ctx)
	if err != nil {
		return ev, false
	}
	return ev, true
}

// TestAccountFeedRefusedLogin: a refused login is one error event naming
// the credential and the venue's reason, then a backoff, not a loop.
func TestAccountFeedRefusedLogin(t *testing.T) {
	v := &feedVenue{follow: func(int, func(), func(AccountEvent)) error {
		return contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "API key expired")
	}}
	r, nc, cur := feedRuntime(t, v)
	_ = askFeed(t, r, nc) // never ready
	ev, ok := nextEvent(t, cur, 3*time.Second)
	if !ok || ev.Type != contract.EventError {
		t.Fatalf("first event %+v (%v), want an error event", ev, ok)
	}
	var data contract.ErrorEvent
	_ = json.Unmarshal(ev.Data, &data)
	if data.Code != "AUTHENTICATION_FAILED" || !strings.Contains(data.Message, feedCred.ID) || !strings.Contains(data.Message, "API key expired") {
		t.Fatalf("error event %+v: want AUTHENTICATION_FAILED naming the credential and the venue's reason", data)
	}
	if ev, ok := nextEvent(t, cur, 6*time.Second); ok {
		t.Fatalf("a second event %s %s after a refused login", ev.Type, ev.Data)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.follows != 2 {
		t.Fatalf("%d logins in about 6 s, want 2 (the retry after a 5 s backoff)", v.follows)
	}
}

// TestAccountFeedReconcilesOnReconnect: events after ready are published
// from the stream with canonical markets; after the connection drops, the
// reconnect's REST snapshot publishes only what changed meanwhile.
func TestAccountFeedReconcilesOnReconnect(t *testing.T) {
	open := contract.Order{ID: "o1", Market: "XBT", Side: contract.Buy, Type: "LIMIT", Size: decimal.NewFromInt(2),
		Price: decimal.NewFromInt(100), FilledSize: decimal.Zero, Status: contract.StatusOpen}
	v := &feedVenue{open: []contract.Order{open}}
	drop := make(chan struct{})
	v.follow = func(n int, ready func(), emit func(AccountEvent)) error {
		ready()
		if n == 1 {
			emit(AccountEvent{Time: time.Now(), Data: orderEventOf(open)}) // as REST shows it: stored once
			<-drop
			return errors.New("connection reset")
		}
		return nil
	}
	r, nc, cur := feedRuntime(t, v)
	if err := askFeed(t, r, nc); err != nil {
		t.Fatalf("the feed did not answer it is open: %v", err)
	}
	ev, ok := nextEvent(t, cur, 3*time.Second)
	var o contract.OrderEvent
	_ = json.Unmarshal(ev.Data, &o)
	if !ok || ev.Type != contract.EventOrder || o.Market != "BTC-USD-PERP" || o.Status != contract.StatusOpen {
		t.Fatalf("first event %s %s, want order o1 OPEN on BTC-USD-PERP", ev.Type, ev.Data)
	}
	if ev, ok := nextEvent(t, cur, 500*time.Millisecond); ok {
		t.Fatalf("unexpected %s %s (%s): the stream's event and the reconcile are one state", ev.Type, ev.Data, ev.Source)
	}
	// While disconnected the order part fills.
	part := open
	part.FilledSize = decimal.NewFromInt(1)
	v.mu.Lock()
	v.open = []contract.Order{part}
	v.fills = []contract.Fill{{ID: "f1", OrderID: "o1", Market: "XBT", Side: contract.Buy, Size: decimal.NewFromInt(1),
		Price: decimal.NewFromInt(100), Fee: decimal.RequireFromString("0.05"), Timestamp: time.Now().Unix()}}
	v.mu.Unlock()
	close(drop)
	var got []string
	for range 2 {
		ev, ok := nextEvent(t, cur, 3*time.Second)
		if !ok {
			t.Fatalf("events after the reconnect: %v, want the order's new state and the fill", got)
		}
		got = append(got, string(ev.Type)+"/"+ev.Source)
	}
	if got[0] != "order/reconcile" || got[1] != "fill/reconcile" {
		t.Fatalf("events after the reconnect: %v, want order/reconcile then fill/reconcile", got)
	}
	if ev, ok := nextEvent(t, cur, 500*time.Millisecond); ok {
		t.Fatalf("unexpected %s %s", ev.Type, ev.Data)
	}
}

// TestAccountFeedClosesWhenIdle: asked for once, a feed closes once the
// idle period passed; one whose credential has an open order stays open.
func TestAccountFeedClosesWhenIdle(t *testing.T) {
	for _, open := range []bool{false, true} {
		v := &feedVenue{follow: func(_ int, ready func(), _ func(AccountEvent)) error { ready(); return nil }}
		if open {
			v.open = []contract.Order{{ID: "o1", Market: "XBT", Side: contract.Buy, Type: "LIMIT", Size: decimal.NewFromInt(1),
				Price: decimal.NewFromInt(100), FilledSize: decimal.Zero, Status: contract.StatusOpen}}
		}
		r, nc, _ := feedRuntimeIdle(t, v, 500*time.Millisecond)
		if err := askFeed(t, r, nc); err != nil {
			t.Fatalf("open order %v: the feed did not open: %v", open, err)
		}
		asked := time.Now()
		closed := func() bool { v.mu.Lock(); defer v.mu.Unlock(); return v.closed > 0 }
		for time.Since(asked) < 4*time.Second && !closed() {
			time.Sleep(50 * time.Millisecond)
		}
		took := time.Since(asked)
		switch {
		case open && closed():
			t.Fatalf("the feed of a credential with an open order closed after %s", took)
		case !open && !closed():
			t.Fatal("the feed no one asked for since 4 s is still open (idle 500 ms)")
		case !open && took < 500*time.Millisecond:
			t.Fatalf("the feed closed after %s, before the idle period", took)
		}
	}
}

// TestFeedStateDropsStaleFrames: after a reconcile published an order's
// later state, the venue's older frames of it (queued behind the snapshot)
// are not published.
func TestFeedStateDropsStaleFrames(t *testing.T) {
	st := newFeedState()
	now := time.Now()
	o := contract.OrderEvent{OrderID: "o1", Market: "BTC-USD-PERP", Status: contract.StatusOpen, FilledSize: decimal.NewFromInt(2)}
	st.apply(now, o)
	older := o
	older.FilledSize = decimal.NewFromInt(1)
	same := o
	if !st.stale(older) || st.stale(same) {
		t.Fatalf("stale(filled 1 after 2) = %v, stale(same state) = %v; want true, false", st.stale(older), st.stale(same))
	}
	done := o
	done.Status, done.FilledSize = contract.StatusFilled, decimal.NewFromInt(3)
	st.apply(now, done)
	if !st.stale(o) {
		t.Fatal("an OPEN frame after the order was published FILLED is not stale")
	}
	f := contract.FillEvent{FillID: "f1", Market: "BTC-USD-PERP"}
	if st.stale(f) {
		t.Fatal("an unpublished fill is stale")
	}
	st.apply(now, f)
	if !st.stale(f) || st.active() {
		t.Fatalf("stale(published fill) = %v, active = %v; want true, false", st.stale(f), st.active())
	}
}

// TestAccountFeedHoldsEventsUntilReconciled: a fill the venue made before
// the feed opened still reaches the stream when the first reconcile
// failed and a newer fill came over the socket meanwhile (the newer one
// must not become the point the retry reads fills from).
func TestAccountFeedHoldsEventsUntilReconciled(t *testing.T) {
	old := contract.Fill{ID: "f-old", OrderID: "o1", Market: "XBT", Side: contract.Buy, Size: decimal.NewFromInt(1),
		Price: decimal.NewFromInt(100), Fee: decimal.RequireFromString("0.05"), Timestamp: time.Now().Add(-10 * time.Second).Unix()}
	open := contract.Order{ID: "o3", Market: "XBT", Side: contract.Buy, Type: "LIMIT", Size: decimal.NewFromInt(2),
		Price: decimal.NewFromInt(90), FilledSize: decimal.Zero, Status: contract.StatusOpen}
	v := &feedVenue{open: []contract.Order{open}, fills: []contract.Fill{old}, failFills: 1}
	v.follow = func(n int, ready func(), emit func(AccountEvent)) error {
		ready()
		emit(AccountEvent{Time: time.Now(), Data: contract.FillEvent{FillID: "f-new", OrderID: "o2", Market: "XBT",
			Side: contract.Sell, Size: decimal.NewFromInt(1), Price: decimal.NewFromInt(101), Fee: decimal.Zero,
			Timestamp: time.Now().Unix()}})
		return nil
	}
	r, nc, cur := feedRuntime(t, v)
	if err := askFeed(t, r, nc); err != nil {
		t.Fatalf("the feed did not answer it is open: %v", err)
	}
	got := map[string]string{}
	for len(got) < 2 {
		ev, ok := nextEvent(t, cur, 3*time.Second)
		if !ok {
			t.Fatalf("fills on the stream: %v, want f-old (reconcile) and f-new (stream)", got)
		}
		if ev.Type == contract.EventOrder {
			continue // the open order, which names the market the reconcile reads fills of
		}
		var f contract.FillEvent
		_ = json.Unmarshal(ev.Data, &f)
		if ev.Type != contract.EventFill || got[f.FillID] != "" {
			t.Fatalf("unexpected %s %s after %v", ev.Type, ev.Data, got)
		}
		got[f.FillID] = ev.Source
	}
	if got["f-old"] != contract.SourceReconcile || got["f-new"] != contract.SourceStream {
		t.Fatalf("fills on the stream: %v, want f-old from reconcile and f-new from the stream", got)
	}
}
