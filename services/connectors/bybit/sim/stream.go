package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/simkit"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/paper"
)

// The public linear websocket at /v5/public/linear
// (https://bybit-exchange.github.io/docs/v5/ws/connect): {"op":"subscribe",
// "args":["tickers.BTCUSDT","orderbook.50.BTCUSDT"],"req_id":"1"} answered
// {"success":true,"ret_msg":"","op":"subscribe","req_id":"1","conn_id":…};
// {"op":"ping","req_id":…} answered with ret_msg "pong". Topics:
//   - tickers.{symbol} (…/websocket/public/ticker): a snapshot, then deltas
//     holding only the fields that changed, every 100 ms.
//   - orderbook.50.{symbol} (…/websocket/public/orderbook): a snapshot, then
//     deltas ({"s","b","a","u","seq"}, size "0" deletes) every 100 ms; u
//     goes up by one per message, and GET /v5/market/orderbook answers from
//     the same numbered book while a stream runs.
// The simulator sends a book delta every 100 ms even when nothing changed.

const bookDepth = 50

type hub struct {
	sockets simkit.Sockets[*wsConn]
	mu      sync.Mutex
	books   map[string]*numberedBook
	skip    map[string]int
}

type numberedBook struct {
	u          int64
	bids, asks []paper.Level
}

type wsConn struct {
	*simkit.Outbox
	mu      sync.Mutex
	subs    map[string]bool
	tickers map[string]map[string]string // symbol → fields last sent
	booked  map[string]bool              // symbol → snapshot sent
}

type wsOp struct {
	Op    string   `json:"op"`
	Args  []string `json:"args"`
	ReqID string   `json:"req_id"`
}

func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	conn, release, err := s.hub.sockets.Accept(w, r, func(ws *websocket.Conn) *wsConn {
		return &wsConn{Outbox: simkit.NewOutbox(ws), subs: map[string]bool{}, tickers: map[string]map[string]string{},
			booked: map[string]bool{}}
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
		var op wsOp
		if json.Unmarshal(data, &op) != nil {
			continue
		}
		ack := map[string]any{"success": true, "ret_msg": "", "op": op.Op, "req_id": op.ReqID, "conn_id": "sim"}
		conn.mu.Lock()
		switch op.Op {
		case "ping":
			ack["ret_msg"] = "pong"
		case "subscribe":
			for _, a := range op.Args {
				conn.subs[a] = true
			}
		case "unsubscribe":
			for _, a := range op.Args {
				delete(conn.subs, a)
				sym := a[strings.LastIndex(a, ".")+1:]
				delete(conn.tickers, sym)
				delete(conn.booked, sym)
			}
		}
		conn.mu.Unlock()
		conn.SendJSON(ack)
	}
}

// StreamDials counts websocket connections accepted so far.
func (s *Server) StreamDials() int { return s.hub.sockets.Dials() }

// DropStreams closes every websocket.
func (s *Server) DropStreams() { s.hub.sockets.Drop() }

// SkipBookUpdates numbers the next n book deltas of symbol but does not
// send them: the client sees u jump.
func (s *Server) SkipBookUpdates(symbol string, n int) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.skip[symbol] += n
}

// pump sends every 100 ms (and at once when a test sets a mark) while any
// socket is open.
func (s *Server) pump() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.eng.Changed():
		}
		conns, ok := s.hub.sockets.Live(func() {
			s.hub.mu.Lock()
			s.hub.books = map[string]*numberedBook{}
			s.hub.mu.Unlock()
		})
		if !ok {
			return
		}
		now := s.cfg.Now().UnixMilli()
		for _, m := range s.eng.Markets() {
			s.sendTicker(conns, m, now)
			s.sendBook(conns, m.Symbol, now)
		}
	}
}

func (s *Server) sendTicker(conns []*wsConn, m paper.MarketInfo, now int64) {
	topic := "tickers." + m.Symbol
	row := map[string]string{"symbol": m.Symbol, "markPrice": m.MarkPrice.String(), "indexPrice": m.IndexPrice.String(),
		"lastPrice": m.MarkPrice.String(), "fundingRate": m.FundingRate.String(), "openInterest": m.OpenInterest.String(),
		"nextFundingTime": strconv.FormatInt(m.NextFundingTime.UnixMilli(), 10)}
	for _, c := range conns {
		c.mu.Lock()
		if !c.subs[topic] {
			c.mu.Unlock()
			continue
		}
		last, typ := c.tickers[m.Symbol], "delta"
		data := map[string]string{"symbol": m.Symbol}
		if last == nil {
			typ, data = "snapshot", row
		} else {
			for k, v := range row {
				if last[k] != v {
					data[k] = v
				}
			}
		}
		c.tickers[m.Symbol] = row
		c.mu.Unlock()
		c.SendJSON(map[string]any{"topic": topic, "type": typ, "data": data, "cs": now, "ts": now})
	}
}

func (s *Server) sendBook(conns []*wsConn, symbol string, now int64) {
	topic := "orderbook.50." + symbol
	var subscribed []*wsConn
	for _, c := range conns {
		c.mu.Lock()
		if c.subs[topic] {
			subscribed = append(subscribed, c)
		}
		c.mu.Unlock()
	}
	if len(subscribed) == 0 {
		return
	}
	b, err := s.eng.Orderbook(symbol, bookDepth)
	if err != nil {
		return
	}
	s.hub.mu.Lock()
	nb := s.hub.books[symbol]
	if nb == nil {
		nb = &numberedBook{}
		s.hub.books[symbol] = nb
	}
	prev := *nb
	nb.u++
	nb.bids, nb.asks = b.Bids, b.Asks
	skip := s.hub.skip[symbol] > 0
	if skip {
		s.hub.skip[symbol]--
	}
	u := nb.u
	s.hub.mu.Unlock()
	for _, c := range subscribed {
		c.mu.Lock()
		first := !c.booked[symbol]
		c.booked[symbol] = true
		c.mu.Unlock()
		switch {
		case first:
			c.SendJSON(map[string]any{"topic": topic, "type": "snapshot", "ts": now, "cts": now,
				"data": map[string]any{"s": symbol, "b": levels(b.Bids), "a": levels(b.Asks), "u": u, "seq": u}})
		case !skip:
			c.SendJSON(map[string]any{"topic": topic, "type": "delta", "ts": now, "cts": now,
				"data": map[string]any{"s": symbol, "b": simkit.BookDiff(prev.bids, b.Bids), "a": simkit.BookDiff(prev.asks, b.Asks), "u": u, "seq": u}})
		}
	}
}

// numbered is the book the stream of symbol numbers, for GET
// /v5/market/orderbook; ok is false when no book stream runs.
func (s *Server) numbered(symbol string) (numberedBook, bool) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	nb := s.hub.books[symbol]
	if nb == nil {
		return numberedBook{}, false
	}
	return *nb, true
}
