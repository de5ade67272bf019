package connector

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// holder owns one network's sockets on the replica with the lease. One
// goroutine (hold) changes its state; readers and snapshot calls hand
// results over on channels.
type holder struct {
	f       *feed
	conn    StreamConn
	events  chan StreamEvent
	failed  chan error
	gone    chan struct{} // closed when the socket is dropped: its reader stops
	lastMsg int64         // Unix ms of the socket's last frame
	dialed  time.Time     // when the socket opened
	socket  string        // names this socket in what is published
	dials   int

	demand     map[string]time.Time // market -> last asked for by any replica
	subscribed map[string]bool
	held       map[string]*heldMarket
	snapshots  chan snapshotResult
	backoff    time.Duration
}

type heldMarket struct {
	mark     markPart
	hasMark  bool
	hasIndex bool // venues sending mark and index apart (OKX): answer only with both
	funding  fundingPart
	hasFund  bool
	book     *book // nil until a snapshot arrived
	pending  []BookUpdate
	resync   bool // a snapshot call is under way; updates wait in pending
}

type snapshotResult struct {
	market string
	book   BookUpdate
	err    error
}

const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 10 * time.Second
)

// hold dials the venue, subscribes what replicas ask for, republishes every
// frame on NATS, and reconnects with backoff until ctx ends.
func (f *feed) hold(ctx context.Context) {
	f.holding.Store(true)
	defer f.holding.Store(false)
	h := &holder{f: f, demand: map[string]time.Time{}, subscribed: map[string]bool{}, held: map[string]*heldMarket{},
		snapshots: make(chan snapshotResult, 16), backoff: minBackoff}
	wants := make(chan []string, 256)
	sub, err := f.s.nc.Subscribe(f.root+".want", func(m *nats.Msg) {
		var w wantMsg
		if json.Unmarshal(m.Data, &w) == nil {
			select {
			case wants <- w.Markets:
			default: // repeated every beat; a dropped one comes again
			}
		}
	})
	if err != nil {
		f.s.log.Warn("stream holder cannot hear demand", "env", f.env, "err", err)
		return
	}
	defer func() { _ = sub.Unsubscribe() }()
	// Hear the replicas' demand at once rather than at their next repeat.
	_ = f.s.nc.Publish(f.root+".ask", nil)
	dial := time.NewTimer(0)
	defer dial.Stop()
	beat := time.NewTicker(f.s.cfg.Beat)
	defer beat.Stop()
	defer h.drop(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case list := <-wants:
			h.want(ctx, list)
		case <-dial.C:
			if !h.dial(ctx) {
				dial.Reset(h.nextBackoff())
			}
		case ev := <-h.events:
			h.lastMsg = f.s.now().UnixMilli()
			h.backoff = minBackoff
			f.s.metrics.StreamMessage(string(f.s.x), string(f.env))
			h.handle(ctx, ev)
		case err := <-h.failed:
			f.s.log.Info("stream socket closed; reconnecting", "env", f.env, "err", err)
			h.drop(ctx)
			dial.Reset(h.nextBackoff())
		case r := <-h.snapshots:
			h.resynced(ctx, r)
		case <-beat.C:
			if h.silent() {
				f.s.log.Info("stream socket silent; reconnecting", "env", f.env, "silence", f.s.cfg.Silence)
				h.drop(ctx)
				dial.Reset(h.nextBackoff())
				continue
			}
			h.sweep(ctx)
			if h.conn != nil && h.lastMsg > 0 {
				h.publish("beat", streamMsg{At: h.lastMsg, Up: true, Socket: h.socket})
			}
		}
	}
}

// silent reports an open socket with subscriptions that sent nothing for
// cfg.Silence: it may be dead without the TCP connection knowing yet.
func (h *holder) silent() bool {
	if h.conn == nil || len(h.subscribed) == 0 {
		return false // venues need not send anything to an idle socket
	}
	last := h.dialed
	if h.lastMsg > 0 {
		last = time.UnixMilli(h.lastMsg)
	}
	return h.f.s.now().Sub(last) > h.f.s.cfg.Silence
}

func (h *holder) nextBackoff() time.Duration {
	d := h.backoff
	h.backoff = min(h.backoff*2, maxBackoff)
	return d
}

func (h *holder) dial(ctx context.Context) bool {
	f := h.f
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := f.s.st.DialStream(dctx, f.env)
	cancel()
	if err != nil {
		// Reads are served over REST meanwhile, so one failure is news only;
		// a venue that keeps refusing (backoff at its ceiling) is a fault.
		level := slog.LevelInfo
		if h.backoff >= maxBackoff {
			level = slog.LevelWarn
		}
		f.s.log.Log(ctx, level, "stream dial failed; reads go to the venue's REST API", "env", f.env, "err", err)
		return false
	}
	h.dials++
	h.conn, h.lastMsg, h.dialed = conn, 0, f.s.now()
	h.socket = f.s.cfg.Replica + "-" + strconv.Itoa(h.dials)
	f.s.metrics.StreamSocket(string(f.s.x), string(f.env), true)
	h.events, h.failed, h.gone = make(chan StreamEvent, 256), make(chan error, 1), make(chan struct{})
	go read(ctx, conn, h.events, h.failed, h.gone)
	h.subscribed = map[string]bool{}
	var list []string
	for m := range h.demand {
		list = append(list, m)
	}
	h.subscribe(ctx, list)
	return true
}

// read pumps one socket's frames until it fails or ctx ends.
func read(ctx context.Context, conn StreamConn, events chan<- StreamEvent, failed chan<- error, gone <-chan struct{}) {
	for {
		ev, err := conn.Next(ctx)
		if err != nil {
			failed <- err // buffered: the holder may have dropped the socket already
			return
		}
		select {
		case events <- ev:
		case <-gone:
			return
		case <-ctx.Done():
			return
		}
	}
}

// drop closes the socket and tells replicas the view is down, so they go
// to REST at once rather than when the bound passes.
func (h *holder) drop(context.Context) {
	if h.conn == nil {
		return
	}
	_ = h.conn.Close()
	close(h.gone)
	h.f.s.metrics.StreamSocket(string(h.f.s.x), string(h.f.env), false)
	h.conn, h.events, h.failed, h.gone = nil, nil, nil, nil
	h.subscribed = map[string]bool{}
	for _, m := range h.held {
		m.book, m.pending, m.resync = nil, nil, false
	}
	h.publish("beat", streamMsg{Up: false})
}

func (h *holder) want(ctx context.Context, list []string) {
	now := h.f.s.now()
	var fresh []string
	for _, m := range list {
		if _, ok := h.demand[m]; !ok {
			fresh = append(fresh, m)
		}
		h.demand[m] = now
	}
	h.subscribe(ctx, fresh)
}

func (h *holder) subscribe(ctx context.Context, list []string) {
	room := int(^uint(0) >> 1)
	if c, ok := h.f.s.st.(StreamCapacity); ok {
		room = c.MaxStreamMarkets() - len(h.subscribed)
	}
	var todo []string
	for _, m := range list {
		if !h.subscribed[m] && len(todo) < room {
			todo = append(todo, m)
		}
	}
	if h.conn == nil || len(todo) == 0 {
		return
	}
	if err := h.conn.Subscribe(ctx, todo); err != nil {
		h.f.s.log.Info("stream subscribe failed", "env", h.f.env, "err", err)
		return // the socket fails too; the redial subscribes again
	}
	for _, m := range todo {
		h.subscribed[m] = true
	}
}

// sweep unsubscribes markets no replica asked for within cfg.Idle.
func (h *holder) sweep(ctx context.Context) {
	now := h.f.s.now()
	var idle []string
	for m, at := range h.demand {
		if now.Sub(at) > h.f.s.cfg.Idle {
			idle = append(idle, m)
			delete(h.demand, m)
			delete(h.held, m)
			delete(h.subscribed, m)
		}
	}
	for _, m := range idle { // replicas must not serve what no longer updates
		if h.conn == nil {
			break // replicas already hold nothing current
		}
		h.publish("m."+subjectToken(m), streamMsg{Market: m, At: h.lastMsg, Up: true, Socket: h.socket, Drop: true})
	}
	if h.conn != nil && len(idle) > 0 {
		_ = h.conn.Unsubscribe(ctx, idle)
		// Room freed: markets asked for past a venue's cap get their turn.
		var waiting []string
		for m := range h.demand {
			if !h.subscribed[m] {
				waiting = append(waiting, m)
			}
		}
		h.subscribe(ctx, waiting)
	}
}

func (h *holder) handle(ctx context.Context, ev StreamEvent) {
	if ev.Market == "" {
		return // heartbeat: lastMsg moved, the next beat tells replicas
	}
	if !h.subscribed[ev.Market] {
		return // still in flight after an unsubscription
	}
	m := h.held[ev.Market]
	if m == nil {
		m = &heldMarket{}
		h.held[ev.Market] = m
	}
	msg := streamMsg{Market: ev.Market, At: h.lastMsg, Up: true, Socket: h.socket}
	if u := ev.Mark; u != nil {
		if u.MarkPrice.Valid {
			m.mark.Mark = u.MarkPrice.Decimal
			m.hasMark = true
		}
		if u.IndexPrice.Valid {
			m.mark.Index, m.hasIndex = u.IndexPrice.Decimal, true
		}
		if m.hasMark && m.hasIndex {
			p := m.mark
			msg.Mark = &p
		}
	}
	if u := ev.Funding; u != nil {
		if u.Rate.Valid {
			m.funding.Rate, m.hasFund = u.Rate.Decimal, true
		}
		if u.NextFundingTime != 0 {
			m.funding.Next = u.NextFundingTime
		}
		if u.OpenInterest.Valid {
			m.funding.OI, m.funding.HasOI = u.OpenInterest, true
		}
		if m.hasFund {
			p := m.funding
			msg.Funding = &p
		}
	}
	if u := ev.Book; u != nil {
		msg.Book = h.bookUpdate(ctx, ev.Market, m, *u)
	}
	if msg.Mark != nil || msg.Funding != nil || msg.Book != nil {
		h.publish("m."+subjectToken(ev.Market), msg)
	}
}

func (h *holder) publish(token string, msg streamMsg) {
	data, err := json.Marshal(msg)
	if err != nil {
		return
	}
	_ = h.f.s.nc.Publish(h.f.root+"."+token, data)
}
