package edge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
)

// GET /v1/ws: one WebSocket, several credentials' events (DESIGN §13).
// Client messages {"op":"subscribe","credentialId","after?","types?",
// "markets?"} and {"op":"unsubscribe","credentialId"}; server messages
// {"op":"subscribed","credentialId"}, {"op":"event","event":{…}} and
// {"op":"error","code","error"}. Each subscription is an open stream of
// the key's cap.

// wsMaxMessage bounds a client message.
const wsMaxMessage = 16 << 10

type wsRequest struct {
	Op           string          `json:"op"`
	CredentialID string          `json:"credentialId"`
	After        string          `json:"after"`
	Types        json.RawMessage `json:"types"`
	Markets      json.RawMessage `json:"markets"`
}

type wsMessage struct {
	Op           string          `json:"op"`
	CredentialID string          `json:"credentialId,omitempty"`
	Event        *contract.Event `json:"event,omitempty"`
	Code         contract.Code   `json:"code,omitempty"`
	Error        string          `json:"error,omitempty"`
}

// listOf reads a filter given as an array of strings or a comma-separated
// string.
func listOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, ","), true
	}
	return "", false
}

// wsSession is one socket.
type wsSession struct {
	s      *Server
	conn   *websocket.Conn
	rawKey string
	ctx    context.Context
	close  context.CancelCauseFunc

	mu   sync.Mutex
	subs map[string]context.CancelFunc // by credential
	wg   sync.WaitGroup
}

func (s *Server) handleWS(c echo.Context) error {
	req := c.Request()
	if req.Method != http.MethodGet {
		return s.fail(c, contract.Errorf(contract.CodeMethodNotAllowed, "use GET /v1/ws; %s is not allowed", req.Method))
	}
	lookCtx, cancelLook := bus.WithDeadline(req.Context(), time.Now().Add(s.cfg.RequestTimeout))
	key, ce := s.authorizeEvents(c, lookCtx)
	cancelLook()
	if ce != nil {
		return s.fail(c, ce)
	}
	s.countUsage(key.ID, eventsScope, nil)
	if !strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		return s.fail(c, contract.Errorf(contract.CodeInvalidRequest, "GET /v1/ws is a WebSocket: send Upgrade: websocket (or use GET /v1/events for SSE)"))
	}
	_ = http.NewResponseController(c.Response().Writer).SetReadDeadline(time.Time{})
	conn, err := websocket.Accept(c.Response(), req, &websocket.AcceptOptions{InsecureSkipVerify: true}) // the API key authorizes, not the origin
	if err != nil {
		return nil // Accept has answered the client
	}
	conn.SetReadLimit(wsMaxMessage)
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(req.Context()))
	sess := &wsSession{s: s, conn: conn, rawKey: eventsKey(req), ctx: ctx, close: cancel, subs: map[string]context.CancelFunc{}}
	sess.run()
	return nil
}

func (w *wsSession) run() {
	defer w.conn.CloseNow()
	go w.keepAlive()
	go func() {
		<-w.ctx.Done()
		switch cause := context.Cause(w.ctx); {
		case errors.Is(cause, errKeyChanged):
			_ = w.conn.Close(websocket.StatusPolicyViolation, cause.Error())
		case errors.Is(cause, errShuttingDown):
			_ = w.conn.Close(websocket.StatusGoingAway, cause.Error())
		}
		_ = w.conn.CloseNow()
	}()
	for {
		_, data, err := w.conn.Read(w.ctx)
		if err != nil {
			break
		}
		w.handle(data)
	}
	w.close(nil)
	w.mu.Lock()
	for _, stop := range w.subs {
		stop()
	}
	w.mu.Unlock()
	w.wg.Wait()
}

func (w *wsSession) keepAlive() {
	t := time.NewTicker(w.s.cfg.EventKeepAlive)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(w.ctx, 10*time.Second)
			err := w.conn.Ping(pctx)
			cancel()
			if err != nil {
				w.close(err)
				return
			}
		}
	}
}

func (w *wsSession) send(m wsMessage) error {
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(w.ctx, 10*time.Second)
	defer cancel()
	return w.conn.Write(ctx, websocket.MessageText, b)
}

func (w *wsSession) fail(ce *contract.Error) {
	_ = w.send(wsMessage{Op: "error", Code: ce.Code, Error: ce.Message})
}

func (w *wsSession) handle(data []byte) {
	var req wsRequest
	if err := json.Unmarshal(data, &req); err != nil {
		w.fail(contract.Errorf(contract.CodeInvalidJSON, "a message is a JSON object such as {\"op\":\"subscribe\",\"credentialId\":\"…\"}"))
		return
	}
	switch req.Op {
	case "subscribe":
		w.subscribe(req)
	case "unsubscribe":
		w.unsubscribe(req.CredentialID)
	default:
		w.fail(contract.Errorf(contract.CodeInvalidRequest, "field \"op\" must be subscribe or unsubscribe, not %q", req.Op))
	}
}

func (w *wsSession) unsubscribe(cred string) {
	w.mu.Lock()
	stop := w.subs[cred]
	delete(w.subs, cred)
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// subscribe checks the key again (it may have changed since the socket
// opened) and the credential as /v1 does, then streams its events.
func (w *wsSession) subscribe(req wsRequest) {
	ctx, cancel := context.WithTimeout(w.ctx, w.s.cfg.RequestTimeout)
	defer cancel()
	key, ce := w.s.authenticate(ctx, w.rawKey)
	if ce != nil {
		w.fail(ce)
		w.close(errKeyChanged)
		return
	}
	types, ok1 := listOf(req.Types)
	markets, ok2 := listOf(req.Markets)
	if !ok1 || !ok2 {
		w.fail(contract.Errorf(contract.CodeInvalidRequest, "fields \"types\" and \"markets\" are arrays of strings (or comma-separated strings)"))
		return
	}
	sub, ce := w.s.parseSubscription(ctx, key, req.CredentialID, types, markets, req.After)
	if ce != nil {
		w.fail(ce)
		return
	}
	w.unsubscribe(sub.cred.ID) // a repeated subscribe replaces the earlier one
	sctx, cur, done, ce := w.s.follow(w.ctx, sub)
	if ce != nil {
		w.fail(ce)
		return
	}
	stopped := make(chan struct{})
	w.mu.Lock()
	w.subs[sub.cred.ID] = func() { close(stopped); done() }
	w.mu.Unlock()
	if err := w.send(wsMessage{Op: "subscribed", CredentialID: sub.cred.ID}); err != nil {
		w.unsubscribe(sub.cred.ID)
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		err := pump(sctx, sub, cur, func(ev contract.Event) error { return w.send(wsMessage{Op: "event", Event: &ev}) })
		select {
		case <-stopped: // unsubscribed or the socket ended
		default:
			if err == nil { // the edge ended it: the key changed, or shutdown
				w.close(context.Cause(sctx))
			}
		}
	}()
}
