package simkit

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/paper"
)

// MarketStreams is the market-data websocket of venues with Binance
// USDⓈ-M's stream shapes (Binance, Aster), in combined-stream form
// (https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams):
// live SUBSCRIBE/UNSUBSCRIBE ({"method":"SUBSCRIBE","params":[...],"id":1},
// answered {"result":null,"id":1}) and two streams: <symbol>@markPrice@1s
// (and @markPrice, every 3 s) and the diff book <symbol>@depth@100ms over
// the top streamDepth levels. It sends a depth event every 100 ms even when
// nothing changed (the venues send only changes), one update id per event,
// and the REST depth answers from the same numbered book (Numbered) while a
// depth stream runs, so a client can resync as the venues document.
type MarketStreams struct {
	eng     *paper.Engine
	now     func() time.Time
	sockets Sockets[*wsConn]
	mu      sync.Mutex
	books   map[string]*numberedBook // symbol → the book the depth stream numbers
	skip    map[string]int           // symbol → depth events to leave unsent (a gap)
}

// NewMarketStreams streams eng's markets on clock now.
func NewMarketStreams(eng *paper.Engine, now func() time.Time) *MarketStreams {
	return &MarketStreams{eng: eng, now: now, books: map[string]*numberedBook{}, skip: map[string]int{}}
}

// streamDepth is how many levels per side the diff book covers.
const streamDepth = 100

type numberedBook struct {
	id         int64
	bids, asks []paper.Level
}

type wsConn struct {
	*Outbox // the venues, too, disconnect a consumer too slow to keep up
	mu      sync.Mutex
	subs    map[string]bool // stream names, lower case
}

func (c *wsConn) subscribed(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subs[strings.ToLower(name)]
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

// Serve upgrades r to a market-data websocket and serves it until it closes.
func (s *MarketStreams) Serve(w http.ResponseWriter, r *http.Request) {
	conn, release, err := s.sockets.Accept(w, r, func(ws *websocket.Conn) *wsConn {
		return &wsConn{Outbox: NewOutbox(ws), subs: map[string]bool{}}
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

// Dials counts websocket connections accepted so far.
func (s *MarketStreams) Dials() int { return s.sockets.Dials() }

// Drop closes every websocket, as the venues do at the 24 h limit.
func (s *MarketStreams) Drop() { s.sockets.Drop() }

// SkipDepthUpdates numbers the next n depth events of symbol but does not
// send them: the client sees a gap in pu.
func (s *MarketStreams) SkipDepthUpdates(symbol string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skip[strings.ToUpper(symbol)] += n
}

// pump sends the streams every 100 ms while any socket is open.
func (s *MarketStreams) pump() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for n := 1; ; n++ {
		// A mark set by a test goes out at once (the venue would send it
		// within the second), so tests need not race the price walk.
		changed := false
		select {
		case <-t.C:
		case <-s.eng.Changed():
			changed = true
			n--
		}
		conns, ok := s.sockets.Live(func() {
			s.mu.Lock()
			s.books = map[string]*numberedBook{}
			s.mu.Unlock()
		})
		if !ok {
			return
		}
		now := s.now()
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
func (s *MarketStreams) sendMark(conns []*wsConn, m paper.MarketInfo, name string, now time.Time) {
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
func (s *MarketStreams) sendDepth(conns []*wsConn, symbol, name string, now time.Time) {
	if !anySubscribed(conns, name) {
		return
	}
	b, err := s.eng.Orderbook(symbol, streamDepth)
	if err != nil {
		return
	}
	s.mu.Lock()
	nb := s.books[symbol]
	if nb == nil {
		nb = &numberedBook{id: now.UnixMilli()}
		s.books[symbol] = nb
	}
	prev := *nb
	nb.id++
	nb.bids, nb.asks = b.Bids, b.Asks
	skip := s.skip[symbol] > 0
	if skip {
		s.skip[symbol]--
	}
	id := nb.id
	s.mu.Unlock()
	if skip {
		return
	}
	broadcast(conns, name, map[string]any{"e": "depthUpdate", "E": now.UnixMilli(), "T": now.UnixMilli(), "s": symbol,
		"U": id, "u": id, "pu": prev.id, "b": BookDiff(prev.bids, b.Bids), "a": BookDiff(prev.asks, b.Asks)})
}

// Numbered returns the book the depth stream of symbol numbers (its last
// update id and levels), for the REST depth; ok is false when no depth
// stream runs.
func (s *MarketStreams) Numbered(symbol string) (id int64, bids, asks []paper.Level, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nb := s.books[symbol]
	if nb == nil {
		return 0, nil, nil, false
	}
	return nb.id, nb.bids, nb.asks, true
}
