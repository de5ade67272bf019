package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/simkit"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/paper"
)

// The market-data websocket, in Aster's combined-stream form
// (https://github.com/asterdex/api-docs/blob/master/V3(Recommended)/EN/aster-finance-futures-api-v3.md, Websocket Market Streams):
// GET /stream and /ws on one host (fact sheet §12.1),
// live SUBSCRIBE/UNSUBSCRIBE, and two streams: <symbol>@markPrice@1s (and
// @markPrice, every 3 s) and the diff book <symbol>@depth@100ms over the
// top streamDepth levels. The simulator sends a depth event every 100 ms
// even when nothing changed (Aster sends only changes), one update id
// per event, and GET /fapi/v3/depth answers from the same numbered book
// while a depth stream runs, so a client can resync as Aster documents.

// streamDepth is how many levels per side the diff book covers.
const streamDepth = 100

type hub struct {
	sockets simkit.Sockets[*wsConn]
	mu      sync.Mutex
	books   map[string]*numberedBook // symbol → the book the depth stream numbers
	skip    map[string]int           // symbol → depth events to leave unsent (a gap)
}

type numberedBook struct {
	id         int64
	bids, asks []paper.Level
}

type wsConn struct {
	*simkit.Outbox // Aster, too, disconnects a consumer too slow to keep up
	mu             sync.Mutex
	subs           map[string]bool // stream names, lower case
}

func (c *wsConn) subscribed(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subs[strings.ToLower(name)]
}

func isStreamPath(p string) bool {
	switch p {
	case "/stream", "/ws":
		return true
	}
	return false
}

// subscribeReq is a live (un)subscription
// (…/websocket-market-streams/Live-Subscribing-Unsubscribing-to-streams):
// {"method":"SUBSCRIBE","params":["btcusdt@markPrice@1s"],"id":1},
// answered {"result":null,"id":1}.
type subscribeReq struct {
	Method string   `json:"method"`
	Params []string `json:"params"`
	ID     int64    `json:"id"`
}

func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	conn, release, err := s.hub.sockets.Accept(w, r, func(ws *websocket.Conn) *wsConn {
		return &wsConn{Outbox: simkit.NewOutbox(ws), subs: map[string]bool{}}
	}, s.pump)
	if err != nil {
		return
	}
	defer release()
	c := conn.Conn()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go conn.Run(ctx, cancel)
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var req subscribeReq
		if json.Unmarshal(data, &req) != nil {
			continue
		}
		conn.mu.Lock()
		for _, p := range req.Params {
			switch req.Method {
			case "SUBSCRIBE":
				conn.subs[strings.ToLower(p)] = true
			case "UNSUBSCRIBE":
				delete(conn.subs, strings.ToLower(p))
			}
		}
		conn.mu.Unlock()
		ack, _ := json.Marshal(map[string]any{"result": nil, "id": req.ID})
		conn.Send(ack)
	}
}

// StreamDials counts websocket connections accepted so far.
func (s *Server) StreamDials() int { return s.hub.sockets.Dials() }

// DropStreams closes every websocket, as Aster does at the 24 h limit.
func (s *Server) DropStreams() { s.hub.sockets.Drop() }

// SkipDepthUpdates numbers the next n depth events of symbol but does not
// send them: the client sees a gap in pu.
func (s *Server) SkipDepthUpdates(symbol string, n int) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.skip[strings.ToUpper(symbol)] += n
}

// pump sends the streams every 100 ms while any socket is open.
func (s *Server) pump() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for n := 1; ; n++ {
		// A mark set by a test goes out at once (Aster would send it
		// within the second), so tests need not race the price walk.
		changed := false
		select {
		case <-t.C:
		case <-s.eng.Changed():
			changed = true
			n--
		}
		conns, ok := s.hub.sockets.Live(func() {
			s.hub.mu.Lock()
			s.hub.books = map[string]*numberedBook{}
			s.hub.mu.Unlock()
		})
		if !ok {
			return
		}
		now := s.cfg.Now()
		for _, m := range s.eng.Markets() {
			sym := strings.ToLower(m.Symbol)
			if changed {
				s.sendMark(conns, m, sym+"@markPrice@1s", now)
				continue
			}
			s.sendDepth(conns, m.Symbol, sym+"@depth@100ms", now)
			if n%10 == 0 {
				s.sendMark(conns, m, sym+"@markPrice@1s", now)
			}
			if n%30 == 0 {
				s.sendMark(conns, m, sym+"@markPrice", now)
			}
		}
	}
}

func anySubscribed(conns []*wsConn, name string) bool {
	for _, c := range conns {
		if c.subscribed(name) {
			return true
		}
	}
	return false
}

// broadcast wraps a payload as a combined-stream frame
// {"stream":"<name>","data":<payload>} and sends it to its subscribers.
func broadcast(conns []*wsConn, name string, payload any) {
	b, err := json.Marshal(map[string]any{"stream": name, "data": payload})
	if err != nil {
		return
	}
	for _, c := range conns {
		if c.subscribed(name) {
			c.Send(b)
		}
	}
}

// sendMark sends a markPriceUpdate
// (…/websocket-market-streams/Mark-Price-Stream): e, E, s, p mark, i index,
// P estimated settle price, r funding rate, T next funding time (ms).
func (s *Server) sendMark(conns []*wsConn, m paper.MarketInfo, name string, now time.Time) {
	if !anySubscribed(conns, name) {
		return
	}
	broadcast(conns, name, map[string]any{"e": "markPriceUpdate", "E": now.UnixMilli(), "s": m.Symbol,
		"p": m.MarkPrice.String(), "i": m.IndexPrice.String(), "P": m.IndexPrice.String(),
		"r": m.FundingRate.String(), "T": m.NextFundingTime.UnixMilli()})
}

// sendDepth sends a depthUpdate
// (…/websocket-market-streams/Diff-Book-Depth-Streams): e, E, T, s, U first
// update id, u final update id, pu the previous event's u, b and a the
// changed [price, qty] levels (qty 0 removes).
func (s *Server) sendDepth(conns []*wsConn, symbol, name string, now time.Time) {
	if !anySubscribed(conns, name) {
		return
	}
	b, err := s.eng.Orderbook(symbol, streamDepth)
	if err != nil {
		return
	}
	s.hub.mu.Lock()
	nb := s.hub.books[symbol]
	if nb == nil {
		nb = &numberedBook{id: now.UnixMilli()}
		s.hub.books[symbol] = nb
	}
	prev := *nb
	nb.id++
	nb.bids, nb.asks = b.Bids, b.Asks
	skip := s.hub.skip[symbol] > 0
	if skip {
		s.hub.skip[symbol]--
	}
	id := nb.id
	s.hub.mu.Unlock()
	if skip {
		return
	}
	broadcast(conns, name, map[string]any{"e": "depthUpdate", "E": now.UnixMilli(), "T": now.UnixMilli(), "s": symbol,
		"U": id, "u": id, "pu": prev.id, "b": simkit.BookDiff(prev.bids, b.Bids), "a": simkit.BookDiff(prev.asks, b.Asks)})
}

// numbered returns the book the depth stream of symbol numbers, for GET
// /fapi/v3/depth; ok is false when no depth stream runs.
func (s *Server) numbered(symbol string) (numberedBook, bool) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	nb := s.hub.books[symbol]
	if nb == nil {
		return numberedBook{}, false
	}
	return *nb, true
}
