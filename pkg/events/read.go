package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
)

// ErrBadID is returned for a resume id that is not one of ours.
var ErrBadID = errors.New("not an event id")

// ParseID reads an event id ("" is no id: ok false).
func ParseID(s string) (seq uint64, ok bool, err error) {
	if s == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%q: %w", s, ErrBadID)
	}
	return n, true, nil
}

// Reader reads account events from the stream.
type Reader struct {
	cfg Config
	js  jetstream.JetStream
	log *slog.Logger // SetLogger; discards by default

	mu     sync.Mutex
	stream jetstream.Stream
}

// NewReader returns a reader on nc. The stream is created on first use
// when no publisher has created it yet.
func NewReader(nc *nats.Conn, cfg Config) (*Reader, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("account events: %w", err)
	}
	return &Reader{cfg: cfg, js: js, log: slog.New(slog.DiscardHandler)}, nil
}

// SetLogger has cursors log when they lose their consumer and when a new
// one cannot be opened yet (a NATS node went away, the stream is electing
// a leader), so a stream that goes quiet can be told from one with no events.
func (r *Reader) SetLogger(l *slog.Logger) { r.log = l }

func (r *Reader) handle(ctx context.Context) (jetstream.Stream, error) {
	r.mu.Lock()
	s := r.stream
	r.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := r.js.Stream(ctx, r.cfg.Subjects.AccountEventStream())
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = Ensure(ctx, r.js, r.cfg)
	}
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.stream = s
	r.mu.Unlock()
	return s, nil
}

// bounds returns the first and last sequence in the stream now.
func (r *Reader) bounds(ctx context.Context) (first, last uint64, err error) {
	s, err := r.handle(ctx)
	if err != nil {
		return 0, 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("account event stream: %w", err)
	}
	return info.State.FirstSeq, info.State.LastSeq, nil
}

// Last returns the credential's newest event of type t in the stream, nil
// when there is none.
func (r *Reader) Last(ctx context.Context, x contract.Exchange, cred string, t contract.EventType) (*contract.Event, error) {
	s, err := r.handle(ctx)
	if err != nil {
		return nil, err
	}
	m, err := s.GetLastMsgForSubject(ctx, r.cfg.Subjects.AccountEvents(x, cred, t))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("account events: last %s of %s: %w", t, cred, err)
	}
	var ev contract.Event
	if err := json.Unmarshal(m.Data, &ev); err != nil {
		return nil, fmt.Errorf("account events: last %s of %s: %w", t, cred, err)
	}
	ev.ID = strconv.FormatUint(m.Sequence, 10)
	return &ev, nil
}

// Where says where a Follow or Read starts.
type Where struct {
	After    uint64 // the last event the client has
	HasAfter bool   // false: only events from now on (Follow), from the oldest kept (Read)
}

// start is the first sequence to deliver and whether the client must be
// told to reset: its resume point is older than the retention (or not
// from this stream at all).
func start(w Where, first, last uint64, fromOldest bool) (uint64, bool) {
	if !w.HasAfter {
		if fromOldest {
			return max(first, 1), false
		}
		return last + 1, false
	}
	if w.After > last || (first > 0 && w.After+1 < first) {
		return last + 1, true
	}
	return w.After + 1, false
}

// filters is the consumer's subject filter: one type's subject, or all
// of the credential's (several filter subjects need nats-server 2.10, so
// several types are picked out here, by typeIn).
func (r *Reader) filters(x contract.Exchange, cred string, types []contract.EventType) []string {
	if len(types) == 1 {
		return []string{r.cfg.Subjects.AccountEvents(x, cred, types[0])}
	}
	return []string{r.cfg.Subjects.AccountEventsOf(x, cred) + ".>"}
}

// typeIn reports whether t is one of types (all when empty).
func typeIn(t contract.EventType, types []contract.EventType) bool {
	if len(types) == 0 {
		return true
	}
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

func (r *Reader) consumer(ctx context.Context, x contract.Exchange, cred string, types []contract.EventType, from uint64) (jetstream.Consumer, error) {
	c, err := r.js.OrderedConsumer(ctx, r.cfg.Subjects.AccountEventStream(), jetstream.OrderedConsumerConfig{
		FilterSubjects: r.filters(x, cred, types),
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from,
		// One try: a Cursor retries itself, sooner and heeding its context.
		MaxResetAttempts: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("account event consumer: %w", err)
	}
	return c, nil
}

// Cursor delivers a credential's events in order.
type Cursor struct {
	Reset bool   // the resume point was older than the retention
	Last  uint64 // the stream's last sequence when the cursor opened

	r     *Reader
	x     contract.Exchange
	cred  string
	types []contract.EventType
	next  uint64 // the sequence to deliver next
	it    jetstream.MessagesContext
	// suspect is an event the stream held past next at the last idle
	// check (stalled), 0 when none.
	suspect uint64
}

// Follow opens a cursor on the credential's events of the given types (all
// when empty) after w.
func (r *Reader) Follow(ctx context.Context, x contract.Exchange, cred string, types []contract.EventType, w Where) (*Cursor, error) {
	first, last, err := r.bounds(ctx)
	if err != nil {
		return nil, err
	}
	from, reset := start(w, first, last, false)
	c := &Cursor{Reset: reset, Last: last, r: r, x: x, cred: cred, types: types, next: from}
	if err := c.open(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// open starts consuming at c.next.
func (c *Cursor) open(ctx context.Context) error {
	cons, err := c.r.consumer(ctx, c.x, c.cred, c.types, c.next)
	if err != nil {
		return err
	}
	// A consumer lost with its server would otherwise be pulled from in
	// silence for ever: a missing heartbeat must surface, so Next starts a
	// new one.
	it, err := cons.Messages(jetstream.PullMaxMessages(64), jetstream.PullHeartbeat(2*time.Second), jetstream.PullExpiry(30*time.Second),
		jetstream.WithMessagesErrOnMissingHeartbeat(true))
	if err != nil {
		return fmt.Errorf("account event consumer: %w", err)
	}
	c.it = it
	return nil
}

// Next waits for the next event. When the consumer fails (a NATS server
// went away, the stream is electing a leader) it starts a new one after
// the last event delivered, so a cursor only ends with ctx.
func (c *Cursor) Next(ctx context.Context) (contract.Event, error) {
	backoff := 100 * time.Millisecond
	for {
		if c.it == nil {
			if err := c.open(ctx); err != nil {
				if ctx.Err() != nil {
					return contract.Event{}, ctx.Err()
				}
				c.r.log.Warn("account event consumer not reopened yet; retrying", "credential_id", c.cred, "next_seq", c.next,
					"retry_in", backoff, "err", err)
				select {
				case <-ctx.Done():
					return contract.Event{}, ctx.Err()
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 2*time.Second)
				continue
			}
		}
		it := c.it
		stop := context.AfterFunc(ctx, it.Stop) // Next may be recreating its consumer, deaf to ctx
		idle, endIdle := context.WithTimeout(ctx, stallCheck)
		m, err := it.Next(jetstream.NextContext(idle))
		endIdle()
		stop()
		if err != nil {
			if ctx.Err() != nil {
				return contract.Event{}, ctx.Err()
			}
			if errors.Is(err, context.DeadlineExceeded) {
				if c.stalled(ctx) {
					c.r.log.Warn("account event consumer delivers nothing while the stream holds the credential's events; opening a new one",
						"credential_id", c.cred, "next_seq", c.next, "pending_seq", c.suspect)
					c.it.Stop()
					c.it, c.suspect = nil, 0
				}
				continue
			}
			c.r.log.Warn("account event consumer lost; opening a new one", "credential_id", c.cred, "next_seq", c.next, "err", err)
			c.it.Stop()
			c.it = nil
			continue
		}
		ev, seq, ok := decode(m)
		if seq > 0 {
			c.next = seq + 1
		}
		c.suspect = 0
		if ok && typeIn(ev.Type, c.types) {
			return ev, nil
		}
	}
}

// stallCheck is how long a cursor waits for its consumer before it asks
// the stream whether it holds an event the consumer should have delivered.
const stallCheck = 5 * time.Second

// stalled reports whether the consumer has held back an event for a whole
// stallCheck: a consumer can stay alive, its heartbeats coming, and deliver
// nothing (one on a server whose copy of the stream lags after a leader
// change), and nats.go replaces it only when it fails. The first check that
// finds an undelivered event notes it; the next, a stallCheck later with
// nothing delivered in between, calls it stalled.
func (c *Cursor) stalled(ctx context.Context) bool {
	s, err := c.r.handle(ctx)
	if err != nil {
		return false
	}
	look, cancel := context.WithTimeout(ctx, stallCheck)
	defer cancel()
	m, err := s.GetLastMsgForSubject(look, c.r.filters(c.x, c.cred, c.types)[0])
	if err != nil || m.Sequence < c.next {
		c.suspect = 0 // nothing held back (or the stream cannot tell now)
		return false
	}
	if c.suspect == 0 {
		c.suspect = m.Sequence
		return false
	}
	return true
}

// Close ends the cursor.
func (c *Cursor) Close() {
	if c.it != nil {
		c.it.Stop()
	}
}

// decode is the event m holds, with its id, and its stream sequence.
func decode(m jetstream.Msg) (contract.Event, uint64, bool) {
	meta, err := m.Metadata()
	if err != nil {
		return contract.Event{}, 0, false
	}
	var ev contract.Event
	if err := json.Unmarshal(m.Data(), &ev); err != nil {
		return contract.Event{}, meta.Sequence.Stream, false
	}
	ev.ID = strconv.FormatUint(meta.Sequence.Stream, 10)
	return ev, meta.Sequence.Stream, true
}

// Page is what Read returns: the events, whether the resume point was too
// old, and the id to resume from next.
type Page struct {
	Events []contract.Event
	Reset  bool
	Next   string
}

// Read returns up to limit of the credential's events of the given types
// after w (from the oldest kept without one), without waiting.
func (r *Reader) Read(ctx context.Context, x contract.Exchange, cred string, types []contract.EventType, w Where, limit int) (Page, error) {
	first, last, err := r.bounds(ctx)
	if err != nil {
		return Page{}, err
	}
	from, reset := start(w, first, last, true)
	page := Page{Events: []contract.Event{}, Reset: reset, Next: strconv.FormatUint(from-1, 10)}
	if from > last {
		return page, nil
	}
	c, err := r.consumer(ctx, x, cred, types, from)
	if err != nil {
		return Page{}, err
	}
	for len(page.Events) < limit {
		batch, err := c.FetchNoWait(limit - len(page.Events))
		if err != nil {
			return Page{}, fmt.Errorf("account events: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			ev, seq, ok := decode(m)
			if ok && typeIn(ev.Type, types) {
				page.Events = append(page.Events, ev)
			}
			if seq > 0 {
				page.Next = strconv.FormatUint(seq, 10)
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return Page{}, fmt.Errorf("account events: %w", err)
		}
		if n == 0 {
			break
		}
	}
	if len(page.Events) < limit { // read all there was: resume from the stream's end
		seen, _ := strconv.ParseUint(page.Next, 10, 64)
		page.Next = strconv.FormatUint(max(last, seen), 10)
	}
	return page, nil
}
