package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit"
)

// The public websocket at /v1 (https://docs.paradex.trade/ws/general-information/introduction),
// JSON-RPC 2.0 (https://docs.paradex.trade/ws/general-information/subscription-channels):
// {"jsonrpc":"2.0","method":"subscribe","params":{"channel":…},"id":1}
// answered {"jsonrpc":"2.0","result":{"channel":…},"usIn":…,"usDiff":…,"id":1};
// unsubscribe likewise. Subscribing to a channel twice, or unsubscribing
// one not subscribed, is an error (same page); the error object here is
// JSON-RPC 2.0's {"code","message"}. Data frames are
// {"jsonrpc":"2.0","method":"subscription","params":{"channel","data"}}:
//   - markets_summary.{market}: the MarketSummary row of GET
//     /markets/summary (…/ws/web-socket-channels/markets-summary/markets-summary).
//   - order_book.{market}.snapshot@15@100ms
//     (…/ws/web-socket-channels/order-book/order-book): {market, seq_no,
//     last_updated_at, update_type "s", inserts, updates, deletes} with
//     {side, price, size} entries; every frame a whole book of 15 levels a
//     side in inserts, as ccxt's pro/paradex reads it.
// Both are sent every 100 ms and at once when a test sets a mark. The
// server pings at the protocol level every 55 s (introduction page,
// "Maintaining a Connection"). Payloads are JSON; Paradex's SBE encoding
// (…/ws/general-information/binary-encoding-sbe) is not simulated.

const (
	streamBookDepth = 15
	bookSuffix      = ".snapshot@15@100ms"
)

type hub struct {
	sockets simkit.Sockets[*wsConn]
	mu      sync.Mutex
	seq     map[string]int64 // market → seq_no of the last book frame
	pongs   int
	dials   int  // sockets that took a public channel (StreamDials)
	muted   bool // MuteStreams: sockets stay open, nothing is sent
}

type wsConn struct {
	*simkit.Outbox
	mu      sync.Mutex
	subs    map[string]bool
	account string // set by the auth method (account.go)
	public  bool   // took a public channel: a market-data socket
}

func (c *wsConn) subscribed(ch string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subs[ch]
}

type rpcReq struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  struct {
		Channel string `json:"channel"`
		Bearer  string `json:"bearer"` // auth
	} `json:"params"`
	ID json.RawMessage `json:"id"`
}

// known reports whether ch is a public channel of a listed market the
// simulator serves.
func (s *Server) known(ch string) bool {
	var m string
	switch {
	case strings.HasPrefix(ch, "markets_summary."):
		m = strings.TrimPrefix(ch, "markets_summary.")
	case strings.HasPrefix(ch, "order_book.") && strings.HasSuffix(ch, bookSuffix):
		m = strings.TrimSuffix(strings.TrimPrefix(ch, "order_book."), bookSuffix)
	default:
		return false
	}
	for _, mi := range s.eng.Markets() {
		if mi.Symbol == m {
			return true
		}
	}
	return false
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
	go func() { // protocol-level pings
		t := time.NewTicker(s.cfg.StreamPingEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pctx, pc := context.WithTimeout(ctx, 10*time.Second)
				err := c.Ping(pctx)
				pc()
				if err != nil {
					cancel()
					c.CloseNow()
					return
				}
				s.hub.mu.Lock()
				s.hub.pongs++
				s.hub.mu.Unlock()
			}
		}
	}()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		in := time.Now()
		var q rpcReq
		if json.Unmarshal(data, &q) != nil || q.JSONRPC != "2.0" {
			conn.SendJSON(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32700, "message": "parse error"}, "id": nil})
			continue
		}
		ch := q.Params.Channel
		if q.Method == "auth" {
			s.streamAuth(conn, q, in)
			continue
		}
		var fail string
		conn.mu.Lock()
		switch q.Method {
		case "subscribe":
			switch {
			case private(ch) && conn.account == "":
				fail = "authenticate (method auth) before subscribing to " + ch
			case !s.known(ch) && !(private(ch) && s.knownPrivate(ch)):
				fail = "unknown channel " + ch
			case conn.subs[ch]:
				fail = "already subscribed to " + ch
			default:
				conn.subs[ch] = true
				if !private(ch) && !conn.public {
					conn.public = true
					s.hub.mu.Lock()
					s.hub.dials++
					s.hub.mu.Unlock()
				}
			}
		case "unsubscribe":
			if !conn.subs[ch] {
				fail = "not subscribed to " + ch
			}
			delete(conn.subs, ch)
		default:
			fail = "method not found"
		}
		conn.mu.Unlock()
		if fail != "" {
			conn.SendJSON(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32600, "message": fail}, "id": q.ID})
			continue
		}
		conn.SendJSON(map[string]any{"jsonrpc": "2.0", "result": map[string]string{"channel": ch},
			"usIn": in.UnixMicro(), "usDiff": time.Since(in).Microseconds(), "id": q.ID})
	}
}

// StreamDials counts the market-data sockets so far: those that
// subscribed to a public channel (an account feed's socket takes only
// private ones).
func (s *Server) StreamDials() int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.hub.dials
}

// StreamPongs counts protocol pings clients answered.
func (s *Server) StreamPongs() int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.hub.pongs
}

// StreamChannels lists the public channels open sockets are subscribed
// to, each once per socket, sorted.
func (s *Server) StreamChannels() []string {
	conns := s.hub.sockets.Open()
	var out []string
	for _, c := range conns {
		c.mu.Lock()
		for ch := range c.subs {
			if !private(ch) {
				out = append(out, ch)
			}
		}
		c.mu.Unlock()
	}
	sort.Strings(out)
	return out
}

// DropStreams closes every websocket.
func (s *Server) DropStreams() { s.hub.sockets.Drop() }

// MuteStreams stops (true) or resumes every data frame while the sockets
// stay open, as a stalled venue does.
func (s *Server) MuteStreams(muted bool) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.muted = muted
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
		conns, ok := s.hub.sockets.Live(nil)
		if !ok {
			return
		}
		s.hub.mu.Lock()
		muted := s.hub.muted
		s.hub.mu.Unlock()
		if muted {
			continue
		}
		if following(conns) { // orders pass intake and rest fills while nobody calls REST
			s.runIntake(s.cfg.Now())
			s.eng.Tick()
		}
		now := s.cfg.Now()
		for _, m := range s.eng.Markets() {
			s.sendSummary(conns, m, now)
			s.sendBook(conns, m.Symbol, now)
		}
	}
}

func frame(ch string, data any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": "subscription", "params": map[string]any{"channel": ch, "data": data}}
}

func (s *Server) sendSummary(conns []*wsConn, m paper.MarketInfo, now time.Time) {
	ch := "markets_summary." + m.Symbol
	for _, c := range conns {
		if c.subscribed(ch) {
			c.SendJSON(frame(ch, summaryRow(m, now)))
		}
	}
}

func (s *Server) sendBook(conns []*wsConn, market string, now time.Time) {
	ch := "order_book." + market + bookSuffix
	var to []*wsConn
	for _, c := range conns {
		if c.subscribed(ch) {
			to = append(to, c)
		}
	}
	if len(to) == 0 {
		return
	}
	b, err := s.eng.Orderbook(market, streamBookDepth)
	if err != nil {
		return
	}
	s.hub.mu.Lock()
	s.hub.seq[market]++
	seq := s.hub.seq[market]
	s.hub.mu.Unlock()
	inserts := make([]map[string]string, 0, len(b.Bids)+len(b.Asks))
	add := func(side string, ls []paper.Level) {
		for _, l := range ls {
			inserts = append(inserts, map[string]string{"side": side, "price": l.Price.String(), "size": l.Size.String()})
		}
	}
	add("BUY", b.Bids)
	add("SELL", b.Asks)
	data := map[string]any{"market": market, "seq_no": seq, "last_updated_at": now.UnixMilli(), "update_type": "s",
		"inserts": inserts, "updates": []any{}, "deletes": []any{}}
	for _, c := range to {
		c.SendJSON(frame(ch, data))
	}
}
