package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit"
	"github.com/perpgate/perpgate/pkg/simkit/fapisim"
)

// The user data stream (fact sheet §12.2, "User Data Streams" of
// https://github.com/asterdex/api-docs/blob/master/V3(Recommended)/EN/aster-finance-futures-api-v3.md):
// POST /fapi/v3/listenKey (signed) gives the account's key, the same one
// while it is active; PUT extends it, DELETE closes it; GET /ws/<listenKey>
// streams ORDER_TRADE_UPDATE and ACCOUNT_UPDATE, built here from the
// paper engine's events. A trade is one ORDER_TRADE_UPDATE with x TRADE
// carrying the order's new state, as on the venue.

// listenKeyTTL is how long a key lives without keep-alive.
const listenKeyTTL = 60 * time.Minute

type userHub struct {
	sockets simkit.Sockets[*userConn]
	mu      sync.Mutex
	orders  map[string]paper.Order // paper id → last state seen
	expires map[string]time.Time   // listen key → expiry
}

type userConn struct {
	*simkit.Outbox
	user string
}

func (s *Server) newListenKey(q *req) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.listenKeys[q.Key]
	if !ok {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		k = hex.EncodeToString(b)
		s.listenKeys[q.Key] = k
	}
	s.users.mu.Lock()
	s.users.expires[k] = q.Now.Add(listenKeyTTL)
	s.users.mu.Unlock()
	return map[string]string{"listenKey": k}, nil
}

func (s *Server) keepListenKey(q *req) (any, *apiErr) {
	s.mu.Lock()
	k, ok := s.listenKeys[q.Key]
	s.mu.Unlock()
	if !ok {
		return nil, errf(400, -1125, "This listenKey does not exist.")
	}
	s.users.mu.Lock()
	s.users.expires[k] = q.Now.Add(listenKeyTTL)
	s.users.mu.Unlock()
	return map[string]any{}, nil
}

func (s *Server) closeListenKey(q *req) (any, *apiErr) {
	s.mu.Lock()
	k := s.listenKeys[q.Key]
	delete(s.listenKeys, q.Key)
	s.mu.Unlock()
	s.users.mu.Lock()
	delete(s.users.expires, k)
	s.users.mu.Unlock()
	return map[string]any{}, nil
}

// userOf is the account of a live listen key.
func (s *Server) userOf(key string) (string, bool) {
	s.users.mu.Lock()
	exp, ok := s.users.expires[key]
	s.users.mu.Unlock()
	if !ok || !s.cfg.Now().Before(exp) {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for user, k := range s.listenKeys {
		if k == key {
			return user, true
		}
	}
	return "", false
}

func (s *Server) isUserStream(path string) bool {
	k, ok := strings.CutPrefix(path, "/ws/")
	return ok && len(k) == 64
}

// ExpireListenKeys ends every listen key, as an hour without keep-alive
// does: each open user stream gets listenKeyExpired and is closed.
func (s *Server) ExpireListenKeys() {
	s.users.mu.Lock()
	clear(s.users.expires)
	s.users.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"e": "listenKeyExpired", "E": s.cfg.Now().UnixMilli()})
	for _, c := range s.users.sockets.Open() {
		c.Send(b)
	}
	s.users.sockets.Drop()
}

// DropPrivate closes every user data socket, as Aster does when a
// connection reaches 24 hours ("User Data Streams" of
// https://github.com/asterdex/api-docs/blob/master/V3(Recommended)/EN/aster-finance-futures-api-v3.md:
// a connection is valid for 24 hours). The listen keys stay live.
func (s *Server) DropPrivate() { s.users.sockets.Drop() }

// PrivateOpen counts the user data sockets the simulator holds (a client's
// dial returns before the simulator has registered its socket).
func (s *Server) PrivateOpen() int { return len(s.users.sockets.Open()) }

func (s *Server) serveUserStream(w http.ResponseWriter, r *http.Request) {
	user, ok := s.userOf(strings.TrimPrefix(r.URL.Path, "/ws/"))
	if !ok {
		s.Write(w, nil, errf(400, -1125, "This listenKey does not exist."), 0)
		return
	}
	conn, release, err := s.users.sockets.Accept(w, r, func(ws *websocket.Conn) *userConn {
		return &userConn{Outbox: simkit.NewOutbox(ws), user: user}
	}, s.tickUsers)
	if err != nil {
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go conn.Run(ctx, cancel)
	for {
		if _, _, err := conn.Conn().Read(ctx); err != nil {
			return
		}
	}
}

// tickUsers moves the engine along while user streams are open, so
// resting orders fill and stops fire without a REST call.
func (s *Server) tickUsers() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		if _, ok := s.users.sockets.Live(func() {}); !ok {
			return
		}
		s.eng.Tick()
	}
}

// onEvent turns a paper event into the frame Aster pushes; it runs under
// the engine's lock, so it only formats and queues.
func (s *Server) onEvent(ev paper.Event) {
	frame := s.userFrame(ev)
	if frame == nil {
		return
	}
	b, err := json.Marshal(frame)
	if err != nil {
		return
	}
	for _, c := range s.users.sockets.Open() {
		if c.user == ev.Account {
			c.Send(b)
		}
	}
}

func (s *Server) userFrame(ev paper.Event) map[string]any {
	ms := ev.Time.UnixMilli()
	switch ev.Kind {
	case paper.EventOrder:
		s.users.mu.Lock()
		s.users.orders[ev.Order.ID] = *ev.Order
		s.users.mu.Unlock()
		if ev.Order.Status == paper.Filled || (ev.Order.Status == paper.Open && ev.Order.FilledSize.IsPositive()) {
			return nil // the TRADE update of the fill said it
		}
		x := fapisim.OrderStatus(*ev.Order)
		return s.orderUpdate(ms, *ev.Order, x, nil)
	case paper.EventFill:
		s.users.mu.Lock()
		o, ok := s.users.orders[ev.Fill.OrderID]
		s.users.mu.Unlock()
		if !ok {
			o = paper.Order{ID: ev.Fill.OrderID, ClientOrderID: ev.Fill.ClientOrderID, Market: ev.Fill.Market, Side: ev.Fill.Side,
				Type: paper.Market, Size: ev.Fill.Size}
		}
		notional := o.AvgFillPrice.Mul(o.FilledSize).Add(ev.Fill.Price.Mul(ev.Fill.Size))
		o.FilledSize = o.FilledSize.Add(ev.Fill.Size)
		o.AvgFillPrice = notional.Div(o.FilledSize)
		o.Status = paper.Open
		if !o.FilledSize.LessThan(o.Size) {
			o.Status = paper.Filled
		}
		s.users.mu.Lock()
		s.users.orders[o.ID] = o
		s.users.mu.Unlock()
		return s.orderUpdate(ms, o, "TRADE", ev.Fill)
	case paper.EventPosition:
		p := ev.Position
		amt := p.Size
		if p.Side == paper.Short {
			amt = amt.Neg()
		}
		return accountUpdate(ms, "ORDER", nil, []map[string]any{{"s": p.Market, "pa": amt.String(), "ep": p.EntryPrice.String(),
			"cr": "0", "up": p.UnrealizedPnL.String(), "mt": "cross", "iw": "0", "ps": "BOTH"}})
	case paper.EventBalance:
		b := ev.Balance
		return accountUpdate(ms, "ORDER", []map[string]any{{"a": "USDT", "wb": b.Wallet.String(), "cw": b.Wallet.String(), "bc": "0"}}, nil)
	case paper.EventFunding:
		f := ev.Funding
		return accountUpdate(ms, "FUNDING_FEE", []map[string]any{{"a": "USDT", "bc": f.Amount.String()}},
			[]map[string]any{{"s": f.Market, "ps": "BOTH"}})
	}
	return nil
}

// orderUpdate is ORDER_TRADE_UPDATE: o.s symbol, c client id, S side, o
// type, f time in force, q quantity, p price, ap average price, sp stop
// price, x execution type, X status, i order id, l last filled, z filled,
// L last price, N/n commission asset and amount, T time, t trade id, m
// maker, R reduce-only, wt working type, ot original type, ps position
// side, rp realized profit.
func (s *Server) orderUpdate(ms int64, o paper.Order, x string, f *paper.Fill) map[string]any {
	w := s.ToWireOrder(o)
	body := map[string]any{"s": o.Market, "c": o.ClientOrderID, "S": string(o.Side), "o": string(o.Type), "f": w.TimeInForce,
		"q": o.Size.String(), "p": o.Price.String(), "ap": o.AvgFillPrice.String(), "sp": w.StopPrice, "x": x,
		"X": fapisim.OrderStatus(o), "i": fapisim.VenueID(o.ID), "l": "0", "z": o.FilledSize.String(), "L": "0", "N": "USDT", "n": "0",
		"T": ms, "t": 0, "b": "0", "a": "0", "m": false, "R": o.ReduceOnly, "wt": "MARK_PRICE", "ot": string(o.Type),
		"ps": "BOTH", "cp": false, "rp": "0"}
	if f != nil {
		id, _ := strconv.ParseInt(f.ID, 10, 64)
		body["l"], body["L"], body["n"], body["t"] = f.Size.String(), f.Price.String(), f.Fee.String(), id
		body["m"], body["rp"] = f.Liquidity == paper.Maker, f.RealizedPnL.String()
	}
	return map[string]any{"e": "ORDER_TRADE_UPDATE", "E": ms, "T": ms, "o": body}
}

// accountUpdate is ACCOUNT_UPDATE: a.m reason, a.B balances, a.P positions.
func accountUpdate(ms int64, reason string, balances, positions []map[string]any) map[string]any {
	if balances == nil {
		balances = []map[string]any{}
	}
	if positions == nil {
		positions = []map[string]any{}
	}
	return map[string]any{"e": "ACCOUNT_UPDATE", "E": ms, "T": ms, "a": map[string]any{"m": reason, "B": balances, "P": positions}}
}
