package simkit

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Sockets keeps a simulator's open websockets: tests count the dials and
// drop every socket to make a client reconnect. C is the simulator's own
// per-socket state (a pointer), made by Accept's open.
type Sockets[C comparable] struct {
	mu      sync.Mutex
	open    map[C]*websocket.Conn
	dials   int
	running bool // a pump started by Accept runs
}

// Accept upgrades r to a websocket and registers open's state for it. With
// pump set, the first socket starts go pump(), which runs until Live tells
// it no socket is left. The caller serves the socket and calls release
// when done, which unregisters and closes it.
func (s *Sockets[C]) Accept(w http.ResponseWriter, r *http.Request, open func(*websocket.Conn) C,
	pump func()) (c C, release func(), err error) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return c, nil, err
	}
	c = open(ws)
	s.mu.Lock()
	if s.open == nil {
		s.open = map[C]*websocket.Conn{}
	}
	s.open[c] = ws
	s.dials++
	if pump != nil && !s.running {
		s.running = true
		go pump()
	}
	s.mu.Unlock()
	return c, func() {
		s.mu.Lock()
		delete(s.open, c)
		s.mu.Unlock()
		ws.CloseNow()
	}, nil
}

// Live is the pump's view: the open sockets, or false when none is left,
// after which the pump must return (the next Accept starts another). idle,
// if set, runs then, under the lock, so no socket arrives while it resets
// the pump's state.
func (s *Sockets[C]) Live(idle func()) ([]C, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.open) == 0 {
		s.running = false
		if idle != nil {
			idle()
		}
		return nil, false
	}
	return s.list(), true
}

// Open lists the open sockets.
func (s *Sockets[C]) Open() []C {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list()
}

func (s *Sockets[C]) list() []C {
	out := make([]C, 0, len(s.open))
	for c := range s.open {
		out = append(out, c)
	}
	return out
}

// Dials counts the websockets accepted so far.
func (s *Sockets[C]) Dials() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials
}

// Drop closes every open websocket, as a venue does at its connection
// lifetime limit.
func (s *Sockets[C]) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ws := range s.open {
		ws.CloseNow()
	}
}

// Outbox queues a socket's outgoing frames for one writer, so a pump never
// waits on a slow client: a client that lets 256 frames pile up is cut
// off, as venues cut off slow consumers.
type Outbox struct {
	ws  *websocket.Conn
	out chan []byte
}

// NewOutbox returns the outbox of ws; Run writes what it queues.
func NewOutbox(ws *websocket.Conn) *Outbox {
	return &Outbox{ws: ws, out: make(chan []byte, 256)}
}

// Conn is the socket, for reading.
func (o *Outbox) Conn() *websocket.Conn { return o.ws }

// Send queues one text frame.
func (o *Outbox) Send(b []byte) {
	select {
	case o.out <- b:
	default:
		o.ws.CloseNow()
	}
}

// SendJSON queues v encoded.
func (o *Outbox) SendJSON(v any) {
	if b, err := json.Marshal(v); err == nil {
		o.Send(b)
	}
}

// Run writes queued frames until ctx ends or a write fails, then calls
// stop (the reader's cancel, so the socket's handler ends too).
func (o *Outbox) Run(ctx context.Context, stop func()) {
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-o.out:
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := o.ws.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				return
			}
		}
	}
}
