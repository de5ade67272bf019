package edge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
)

// Account events (DESIGN §13): GET /v1/events streams a credential's
// events as Server-Sent Events; GET /v1/ws carries several credentials'
// on one WebSocket. Both authenticate and scope as POST /v1 does, and
// every open stream counts against its key's cap.

// Routes of the event streams.
const (
	eventsPath = "/v1/events"
	wsPath     = "/v1/ws"
)

// eventsScope is the operation a key's allowedOperations must list for
// the key to read account events: the same data getEvents returns.
const eventsScope = "getEvents"

// subscription is one credential's event stream as a client asked for it.
type subscription struct {
	key     contract.KeyInfo
	cred    contract.CredentialInfo
	types   []contract.EventType
	markets *contract.Guards // nil: every market
	where   events.Where
}

// wants reports whether ev passes the subscription's filters and the
// key's allowedMarkets. Events of no market (balance) pass both.
func (s *subscription) wants(ev *contract.Event) bool {
	if len(s.types) > 0 && !slices.Contains(s.types, ev.Type) && ev.Type != contract.EventReset {
		return false
	}
	m := ev.Market()
	if m == "" {
		return true
	}
	if len(s.key.AllowedMarkets) > 0 && !s.key.AllowsMarket(m) {
		return false
	}
	return s.markets == nil || s.markets.AllowsMarket(m)
}

// openStreams counts each key's open event streams and closes them when
// the key changes (revoked, halted, guards edited) or a credential goes.
type openStreams struct {
	mu      sync.Mutex
	byKey   map[string]map[*openStream]struct{}
	closing bool // the edge is shutting down: no new streams
}

type openStream struct {
	keyID, credID string
	cancel        context.CancelCauseFunc
}

// Why a stream was ended by the edge rather than its client.
var (
	errKeyChanged   = errors.New("API key or credential changed; reconnect")
	errShuttingDown = errors.New("the gateway is shutting down; reconnect")
)

// closeAll ends every stream and refuses new ones: an HTTP server's
// shutdown waits for handlers, and a stream's would never return.
func (o *openStreams) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closing = true
	for _, set := range o.byKey {
		for st := range set {
			st.cancel(errShuttingDown)
		}
	}
}

func newOpenStreams() *openStreams {
	return &openStreams{byKey: map[string]map[*openStream]struct{}{}}
}

// add registers a stream of key unless the key is at its tier's cap.
func (o *openStreams) add(key contract.KeyInfo, credID string, cancel context.CancelCauseFunc) (*openStream, *contract.Error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closing {
		ce := contract.Errorf(contract.CodeServiceUnavailable, "%s", errShuttingDown.Error())
		ce.RetryAfterSeconds = retryAfterUnavailable
		return nil, ce
	}
	set := o.byKey[key.ID]
	if limit := key.Tier.MaxOpenEventStreams(); len(set) >= limit {
		ce := contract.Errorf(contract.CodeRateLimited,
			"API key %s has %d event streams open, the most the %s tier allows; close one (or subscribe on one WebSocket) first",
			key.Display, limit, key.Tier)
		ce.RetryAfterSeconds = 1
		return nil, ce
	}
	if set == nil {
		set = map[*openStream]struct{}{}
		o.byKey[key.ID] = set
	}
	st := &openStream{keyID: key.ID, credID: credID, cancel: cancel}
	set[st] = struct{}{}
	return st, nil
}

func (o *openStreams) remove(st *openStream) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if set := o.byKey[st.keyID]; set != nil {
		delete(set, st)
		if len(set) == 0 {
			delete(o.byKey, st.keyID)
		}
	}
}

// onChange closes the streams a key or credential change concerns: they
// were authorized under what changed, and the client reconnects (with its
// last event id) under what holds now.
func (o *openStreams) onChange(ev contract.ChangeEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for keyID, set := range o.byKey {
		for st := range set {
			if (ev.KeyID != "" && keyID == ev.KeyID) || (ev.CredentialID != "" && st.credID == ev.CredentialID) {
				st.cancel(errKeyChanged)
			}
		}
	}
}

// eventsKey is the key of an event stream request: as for /v1, or the
// api_key query parameter (EventSource and browsers cannot set headers).
func eventsKey(r *http.Request) string {
	if k := apiKeyOf(r); k != "" {
		return k
	}
	return strings.TrimSpace(r.URL.Query().Get("api_key"))
}

// authorizeEvents runs /v1's authentication, rate limit and scope checks
// for an event stream; every failure is the /v1 error.
func (s *Server) authorizeEvents(c echo.Context, ctx context.Context) (contract.KeyInfo, *contract.Error) {
	key, ce := s.authenticate(ctx, eventsKey(c.Request()))
	if ce != nil {
		return key, ce
	}
	logOf(c).keyPrefix = key.Display
	if ce := s.rateLimit(ctx, c.Response().Header(), key); ce != nil {
		return key, ce
	}
	if len(key.AllowedOperations) > 0 && !slices.Contains(key.AllowedOperations, eventsScope) {
		return key, contract.Errorf(contract.CodeOperationNotAllowed,
			"this API key may not read account events: its allowedOperations lack %s", eventsScope)
	}
	return key, nil
}

// parseSubscription checks a credential and the filters as /v1 would.
func (s *Server) parseSubscription(ctx context.Context, key contract.KeyInfo, credID, types, markets, after string) (*subscription, *contract.Error) {
	raw, _ := json.Marshal(credID)
	cred, ce := s.credential(ctx, key, map[string]json.RawMessage{"credentialId": raw})
	if ce != nil {
		return nil, ce
	}
	sub := &subscription{key: key, cred: cred}
	if sub.types, ce = parseTypes(types); ce != nil {
		return nil, ce
	}
	if markets != "" {
		g, ce := contract.Guards{AllowedMarkets: splitList(markets)}.Normalize()
		if ce != nil {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "markets: %s", strings.TrimPrefix(ce.Message, "allowedMarkets: "))
		}
		sub.markets = &g
	}
	seq, ok, err := events.ParseID(after)
	if err != nil {
		return nil, contract.Errorf(contract.CodeInvalidRequest,
			"after (or Last-Event-ID) %q is not an event id: pass the id of the last event you received", after)
	}
	sub.where = events.Where{After: seq, HasAfter: ok}
	return sub, nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseTypes(v string) ([]contract.EventType, *contract.Error) {
	var out []contract.EventType
	for _, p := range splitList(v) {
		t := contract.EventType(p)
		if !t.Valid() {
			names := make([]string, len(contract.EventTypes))
			for i, x := range contract.EventTypes {
				names[i] = string(x)
			}
			return nil, contract.Errorf(contract.CodeInvalidRequest, "types: %q is not an event type; use %s", p, strings.Join(names, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}

// follow opens the subscription's cursor and registers the stream; done
// unregisters it. ctx ends when the key or credential changes.
func (s *Server) follow(ctx context.Context, sub *subscription) (context.Context, *events.Cursor, func(), *contract.Error) {
	sctx, cancel := context.WithCancelCause(ctx)
	st, ce := s.streams.add(sub.key, sub.cred.ID, cancel)
	if ce != nil {
		cancel(nil)
		return nil, nil, nil, ce
	}
	// A key revoked between its look-up and the registration would not be
	// closed by the event: look again now that the stream is registered.
	if k, err := s.dir.key(ctx, sub.key.Hash); err == nil && k.RevokedAt != nil {
		s.streams.remove(st)
		cancel(nil)
		return nil, nil, nil, contract.Errorf(contract.CodeKeyRevoked, "API key %s changed while the stream opened; reconnect", sub.key.Display)
	}
	cur, err := s.eventLog.Follow(ctx, sub.cred.Exchange, sub.cred.ID, sub.types, sub.where)
	if err != nil {
		s.streams.remove(st)
		cancel(nil)
		return nil, nil, nil, s.eventsUnavailable(ctx, err)
	}
	// The cursor is open first: what the feed's reconcile publishes is in it.
	release := s.interest.add(ctx, sub.cred.Exchange, sub.cred.ID)
	return sctx, cur, func() { release(); cur.Close(); s.streams.remove(st); cancel(nil) }, nil
}

func (s *Server) eventsUnavailable(ctx context.Context, err error) *contract.Error {
	if bus.IsDisconnected(err) {
		return s.unavailable(ctx, "nats", err, busDown)
	}
	return s.unavailable(ctx, "jetstream", err,
		"the gateway's event store (NATS JetStream) is not answering, so account events cannot be read; retry shortly")
}

// resetEvent tells the client its resume point is gone; its id is where
// the stream continues from.
func resetEvent(sub *subscription, id string) contract.Event {
	now := time.Now().UnixMilli()
	return contract.Event{ID: id, Type: contract.EventReset, CredentialID: sub.cred.ID,
		Exchange: sub.cred.Exchange, Time: now, ReceivedAt: now, Source: contract.SourceStream, Data: json.RawMessage("{}")}
}

// pump sends the subscription's events to send until ctx ends or send
// fails; it returns nil when ctx ended. A reset comes first when due.
func pump(ctx context.Context, sub *subscription, cur *events.Cursor, send func(contract.Event) error) error {
	if cur.Reset {
		if err := send(resetEvent(sub, strconv.FormatUint(cur.Last, 10))); err != nil {
			return err
		}
	}
	for {
		ev, err := cur.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if sub.wants(&ev) {
			if err := send(ev); err != nil {
				return err
			}
		}
	}
}

// handleEvents serves GET /v1/events.
func (s *Server) handleEvents(c echo.Context) error {
	req := c.Request()
	if req.Method != http.MethodGet {
		return s.fail(c, contract.Errorf(contract.CodeMethodNotAllowed, "use GET /v1/events; %s is not allowed", req.Method))
	}
	lookCtx, cancelLook := bus.WithDeadline(req.Context(), time.Now().Add(s.cfg.RequestTimeout))
	defer cancelLook()
	key, ce := s.authorizeEvents(c, lookCtx)
	if ce != nil {
		return s.fail(c, ce)
	}
	q := req.URL.Query()
	after := q.Get("after")
	if after == "" {
		after = strings.TrimSpace(req.Header.Get("Last-Event-ID"))
	}
	sub, ce := s.parseSubscription(lookCtx, key, q.Get("credentialId"), q.Get("types"), q.Get("markets"), after)
	if ce != nil {
		s.countUsage(key.ID, eventsScope, ce)
		return s.fail(c, ce)
	}
	ctx, cur, done, ce := s.follow(req.Context(), sub)
	s.countUsage(key.ID, eventsScope, ce)
	if ce != nil {
		return s.fail(c, ce)
	}
	defer done()
	logOf(c).exchange = string(sub.cred.Exchange)
	return s.serveSSE(c, ctx, sub, cur)
}

func (s *Server) serveSSE(c echo.Context, ctx context.Context, sub *subscription, cur *events.Cursor) error {
	w := c.Response()
	// The server's read timeout would otherwise end a long stream.
	_ = http.NewResponseController(w.Writer).SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()

	var mu sync.Mutex // the pump and the keep-alive share the writer
	write := func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := w.Write(b); err != nil {
			return err
		}
		w.Flush()
		return nil
	}
	pctx, stop := context.WithCancel(ctx)
	keepAliveDone := make(chan struct{})
	// The keep-alive must be over before the handler returns: net/http
	// finishes the response then, and a late flush would race with it.
	defer func() {
		stop()
		<-keepAliveDone
	}()
	go func() {
		defer close(keepAliveDone)
		t := time.NewTicker(s.cfg.EventKeepAlive)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
				if write([]byte(": keep-alive\n\n")) != nil {
					stop()
					return
				}
			}
		}
	}()
	err := pump(pctx, sub, cur, func(ev contract.Event) error {
		data, _ := json.Marshal(ev)
		b := make([]byte, 0, len(data)+len(ev.ID)+16)
		b = append(append(append(b, "id: "...), ev.ID...), "\ndata: "...)
		b = append(append(b, data...), "\n\n"...)
		return write(b)
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		s.log.Warn("event stream ended", "request_id", logOf(c).requestID, "err", err)
	}
	return nil
}
