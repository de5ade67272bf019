package sim

import (
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
	"github.com/shopspring/decimal"
)

// The user data stream
// (https://developers.binance.com/docs/derivatives/usds-margined-futures/user-data-streams/Connect):
// POST /fapi/v1/listenKey creates a key (or returns the account's active
// one) valid 60 minutes, PUT extends it, DELETE closes it; all three need
// only X-MBX-APIKEY (USER_STREAM). The socket is /private/ws/<listenKey>
// (also /ws/<listenKey> and /private/ws?listenKey=). Events come from the
// paper engine's own account changes: ORDER_TRADE_UPDATE
// (…/user-data-streams/Event-Order-Update), ACCOUNT_UPDATE
// (…/Event-Balance-and-Position-Update), ALGO_UPDATE for conditional orders
// (…/Event-Algo-Order-Update) and listenKeyExpired
// (…/Event-User-Data-Stream-Expired).

// listenKeyTTL is how long a listen key lives without a keepalive.
const listenKeyTTL = 60 * time.Minute

type privHub struct {
	once    sync.Once
	sockets simkit.Sockets[*privConn]

	mu      sync.Mutex
	keys    map[string]*listenKey // listenKey → its state
	queue   []paper.Event
	wake    chan struct{}
	orders  map[string]paper.Order // paper id → last order event
	pending map[string][]any       // account → ACCOUNT_UPDATE parts waiting for the balance
	// opening counts an account's sockets between upgrade and registration;
	// what is sent meanwhile waits in backlog, as the venue had subscribed
	// the socket by the time its handshake answered.
	opening map[string]int
	backlog map[string][][]byte
}

type listenKey struct {
	apiKey  string
	expires time.Time
}

type privConn struct {
	*simkit.Outbox
	key    string // listenKey
	apiKey string
}

func (h *privHub) init(s *Server) {
	h.once.Do(func() {
		h.keys = map[string]*listenKey{}
		h.orders = map[string]paper.Order{}
		h.pending = map[string][]any{}
		h.opening = map[string]int{}
		h.backlog = map[string][][]byte{}
		h.wake = make(chan struct{}, 1)
		s.eng.OnEvent(h.enqueue)
		go s.dispatch()
	})
}

// enqueue runs under the engine's lock: it only queues.
func (h *privHub) enqueue(ev paper.Event) {
	h.mu.Lock()
	h.queue = append(h.queue, ev)
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func isListenKeyPath(p string) bool { return p == "/fapi/v1/listenKey" }

// ServeHTTP serves the user data stream's routes, and the rest as the
// Binance-shaped core does.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && isPrivatePath(r.URL.Path):
		s.servePrivate(rw, r)
	case isListenKeyPath(r.URL.Path):
		s.serveListenKey(rw, r)
	default:
		s.Core.ServeHTTP(rw, r)
	}
}

func isPrivatePath(p string) bool {
	return p == "/private/ws" || strings.HasPrefix(p, "/private/ws/") || (strings.HasPrefix(p, "/ws/") && len(p) > len("/ws/"))
}

// serveListenKey answers POST, PUT and DELETE /fapi/v1/listenKey
// (…/user-data-streams/Start-User-Data-Stream, Keepalive-…, Close-…).
func (s *Server) serveListenKey(rw http.ResponseWriter, r *http.Request) {
	s.priv.init(s)
	s.Hit(r.Method, r.URL.Path)
	apiKey := r.Header.Get("X-MBX-APIKEY")
	if _, ok := s.Secret(apiKey); !ok {
		s.Write(rw, nil, errf(401, -2015, "Invalid API-key, IP, or permissions for action, request ip: 127.0.0.1"), 0)
		return
	}
	if f, ok := s.NextFailure(r.Method, r.URL.Path); ok {
		s.Write(rw, nil, &apiErr{Status: f.Status, Code: f.Code, Msg: f.Msg}, 0)
		return
	}
	now := s.cfg.Now()
	h := &s.priv
	h.mu.Lock()
	active := ""
	for k, st := range h.keys {
		if st.apiKey == apiKey && now.Before(st.expires) {
			active = k
		}
	}
	switch r.Method {
	case http.MethodPost:
		if active == "" {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			active = hex.EncodeToString(b)
			h.keys[active] = &listenKey{apiKey: apiKey}
		}
		h.keys[active].expires = now.Add(listenKeyTTL)
	case http.MethodPut:
		if active == "" {
			h.mu.Unlock()
			s.Write(rw, nil, errf(400, -1125, "This listenKey does not exist."), 0)
			return
		}
		h.keys[active].expires = now.Add(listenKeyTTL)
	case http.MethodDelete:
		delete(h.keys, active)
		h.mu.Unlock()
		s.closePrivate(func(c *privConn) bool { return c.key == active && active != "" })
		s.Write(rw, map[string]any{}, nil, 0)
		return
	default:
		h.mu.Unlock()
		s.Write(rw, nil, errf(404, -1000, "Path %s %s not found.", r.Method, r.URL.Path), 0)
		return
	}
	h.mu.Unlock()
	s.Write(rw, map[string]string{"listenKey": active}, nil, 0)
}

// servePrivate serves a user data socket. An unknown or expired listen
// key is refused before the upgrade.
func (s *Server) servePrivate(w http.ResponseWriter, r *http.Request) {
	s.priv.init(s)
	key := r.URL.Query().Get("listenKey")
	if i := strings.LastIndex(r.URL.Path, "/"); key == "" && i >= 0 {
		key = r.URL.Path[i+1:]
	}
	h := &s.priv
	h.mu.Lock()
	st := h.keys[key]
	ok := st != nil && s.cfg.Now().Before(st.expires)
	apiKey := ""
	if ok {
		apiKey = st.apiKey
		h.opening[apiKey]++
	}
	h.mu.Unlock()
	if !ok {
		s.Write(w, nil, errf(400, -1125, "This listenKey does not exist."), 0)
		return
	}
	conn, release, err := h.sockets.Accept(w, r, func(ws *websocket.Conn) *privConn {
		return &privConn{Outbox: simkit.NewOutbox(ws), key: key, apiKey: apiKey}
	}, nil)
	h.mu.Lock()
	if h.opening[apiKey]--; h.opening[apiKey] == 0 {
		if err == nil {
			for _, b := range h.backlog[apiKey] {
				conn.Send(b)
			}
		}
		delete(h.backlog, apiKey)
	}
	h.mu.Unlock()
	if err != nil {
		return
	}
	defer release()
	ctx := r.Context()
	go conn.Run(ctx, func() { conn.Conn().CloseNow() })
	for {
		if _, _, err := conn.Conn().Read(ctx); err != nil {
			return
		}
	}
}

func (s *Server) closePrivate(match func(*privConn) bool) {
	for _, c := range s.priv.sockets.Open() {
		if match(c) {
			c.Conn().CloseNow()
		}
	}
}

// PrivateDials counts user data sockets accepted so far.
func (s *Server) PrivateDials() int { return s.priv.sockets.Dials() }

// PrivateOpen counts the user data sockets open now.
func (s *Server) PrivateOpen() int { return len(s.priv.sockets.Open()) }

// DropPrivate closes every user data socket, as Binance does at 24 h.
func (s *Server) DropPrivate() { s.priv.sockets.Drop() }

// ExpireListenKey ends apiKey's listen key now: its sockets get
// listenKeyExpired and no more events (they stay open, as on Binance).
func (s *Server) ExpireListenKey(apiKey string) {
	s.priv.init(s)
	h := &s.priv
	now := s.cfg.Now()
	h.mu.Lock()
	var gone []string
	for k, st := range h.keys {
		if st.apiKey == apiKey {
			gone = append(gone, k)
			delete(h.keys, k)
		}
	}
	h.mu.Unlock()
	for _, k := range gone {
		b, _ := json.Marshal(map[string]any{"e": "listenKeyExpired", "E": now.UnixMilli(), "listenKey": k})
		for _, c := range h.sockets.Open() {
			if c.key == k {
				c.Send(b)
			}
		}
	}
}

// dispatch turns the engine's events into user data events, in order.
func (s *Server) dispatch() {
	h := &s.priv
	for range h.wake {
		h.mu.Lock()
		q := h.queue
		h.queue = nil
		h.mu.Unlock()
		for _, ev := range q {
			if msg := s.userEvent(ev); msg != nil {
				s.sendTo(ev.Account, msg)
			}
		}
	}
}

func (s *Server) sendTo(apiKey string, msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		return
	}
	h := &s.priv
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.opening[apiKey] > 0 {
		h.backlog[apiKey] = append(h.backlog[apiKey], b)
	}
	for _, c := range h.sockets.Open() {
		if st := h.keys[c.key]; c.apiKey == apiKey && st != nil && st.apiKey == apiKey {
			c.Send(b)
		}
	}
}

// userEvent is ev as Binance pushes it, or nil when it waits for its
// balance (ACCOUNT_UPDATE carries position and balance together) or is
// already told.
func (s *Server) userEvent(ev paper.Event) any {
	h := &s.priv
	t := ev.Time.UnixMilli()
	switch ev.Kind {
	case paper.EventOrder:
		o := *ev.Order
		prev, seen := h.orders[o.ID]
		h.orders[o.ID] = o
		if o.Type == paper.StopMarket || o.Type == paper.TakeProfitMarket {
			return s.algoUpdate(o, t)
		}
		// A fill's ORDER_TRADE_UPDATE already told this state.
		if seen && o.FilledSize.Equal(prev.FilledSize) && o.FilledSize.IsPositive() && o.Status != paper.Cancelled {
			return nil
		}
		x := fapisim.OrderStatus(o)
		if x == "PARTIALLY_FILLED" {
			x = "TRADE"
		}
		return orderUpdate(o, x, t, nil)
	case paper.EventFill:
		f := *ev.Fill
		o := h.orders[f.OrderID]
		o.FilledSize = o.FilledSize.Add(f.Size)
		if o.FilledSize.GreaterThanOrEqual(o.Size) {
			o.Status = paper.Filled
		}
		h.orders[f.OrderID] = o
		return orderUpdate(o, "TRADE", t, &f)
	case paper.EventPosition:
		p := ev.Position
		amt := p.Size
		if p.Side == paper.Short {
			amt = amt.Neg()
		}
		h.pending[ev.Account] = append(h.pending[ev.Account], map[string]any{"s": p.Market, "pa": amt.String(),
			"ep": p.EntryPrice.String(), "bep": p.EntryPrice.String(), "cr": "0", "up": p.UnrealizedPnL.String(),
			"mt": "cross", "iw": "0", "ps": "BOTH"})
	case paper.EventFunding:
		h.pending[ev.Account] = append(h.pending[ev.Account], *ev.Funding)
	case paper.EventBalance:
		return s.accountUpdate(ev.Account, ev.Balance, t)
	}
	return nil
}

// accountUpdate is ACCOUNT_UPDATE with the positions queued before this
// balance; a funding settlement makes it reason FUNDING_FEE with the
// amount in bc, and no position (a cross position's funding, as
// documented).
func (s *Server) accountUpdate(acct string, b *paper.Balance, t int64) any {
	h := &s.priv
	reason, change := "ORDER", decimal.Zero
	positions := []any{}
	for _, p := range h.pending[acct] {
		if f, ok := p.(paper.FundingPayment); ok {
			reason, change = "FUNDING_FEE", f.Amount
			continue
		}
		positions = append(positions, p)
	}
	delete(h.pending, acct)
	return map[string]any{"e": "ACCOUNT_UPDATE", "E": t, "T": t, "a": map[string]any{"m": reason,
		"B": []any{map[string]any{"a": "USDT", "wb": b.Wallet.String(), "cw": b.Wallet.String(), "bc": change.String()}},
		"P": positions}}
}

// orderUpdate is ORDER_TRADE_UPDATE; f is the trade of execution type
// TRADE.
func orderUpdate(o paper.Order, x string, t int64, f *paper.Fill) any {
	tif := "GTC"
	if o.PostOnly {
		tif = "GTX"
	}
	status := fapisim.OrderStatus(o)
	if x == "NEW" || x == "CANCELED" || x == "EXPIRED" || x == "REJECTED" {
		x = status
	}
	if status == "REJECTED" {
		x = "EXPIRED" // Binance reports a refusal after acceptance as EXPIRED
		status = "EXPIRED"
	}
	typ := string(o.Type)
	if o.Type == paper.StopMarket || o.Type == paper.TakeProfitMarket {
		typ = "MARKET" // the order a triggered algo order placed; ot keeps its kind
	}
	u := map[string]any{"s": o.Market, "c": o.ClientOrderID, "S": string(o.Side), "o": typ, "f": tif,
		"q": o.Size.String(), "p": o.Price.String(), "ap": o.AvgFillPrice.String(), "sp": "0", "x": x, "X": status,
		"i": fapisim.VenueID(o.ID), "l": "0", "z": o.FilledSize.String(), "L": "0", "N": "USDT", "n": "0", "T": t,
		"t": 0, "b": "0", "a": "0", "m": false, "R": o.ReduceOnly, "wt": "CONTRACT_PRICE", "ot": string(o.Type),
		"ps": "BOTH", "cp": false, "rp": "0", "pP": false, "si": 0, "ss": 0, "V": "EXPIRE_MAKER", "pm": "NONE", "gtd": 0}
	if f != nil {
		id, _ := strconv.ParseInt(f.ID, 10, 64)
		u["l"], u["L"], u["n"], u["t"], u["T"] = f.Size.String(), f.Price.String(), f.Fee.String(), id, f.Time.UnixMilli()
		u["m"], u["rp"] = f.Liquidity == paper.Maker, f.RealizedPnL.String()
		if o.FilledSize.IsPositive() {
			u["ap"] = o.AvgFillPrice.String()
		}
	}
	return map[string]any{"e": "ORDER_TRADE_UPDATE", "E": t, "T": t, "o": u}
}

// algoUpdate is ALGO_UPDATE for a conditional order; its fills, once
// triggered, come as ORDER_TRADE_UPDATE of the actual order (ai).
func (s *Server) algoUpdate(o paper.Order, t int64) any {
	a := s.algoOf(o.ID)
	if a == nil {
		return nil
	}
	status := map[paper.OrderStatus]string{paper.Open: "NEW", paper.Filled: "FINISHED",
		paper.Cancelled: "CANCELED", paper.Rejected: "REJECTED"}[o.Status]
	ai := ""
	if o.Status == paper.Filled {
		ai = strconv.FormatInt(fapisim.VenueID(o.ID), 10)
	}
	return map[string]any{"e": "ALGO_UPDATE", "T": t, "E": t, "o": map[string]any{"caid": a.ClientID, "aid": a.ID,
		"at": "CONDITIONAL", "o": a.Type, "s": a.Symbol, "S": a.Side, "ps": "BOTH", "f": "GTC", "q": a.Qty.String(),
		"X": status, "ai": ai, "ap": o.AvgFillPrice.String(), "aq": o.FilledSize.String(), "act": "MARKET",
		"tp": a.Trigger.String(), "p": "0", "V": "EXPIRE_MAKER", "wt": a.WorkingType, "pm": "NONE", "cp": false,
		"pP": false, "R": a.ReduceOnly, "tt": 0, "gtd": 0, "rm": o.Reason}}
}

// algoOf finds the algo order resting as paper order id; placement
// registers it just after the engine took it, so wait a moment for it.
func (s *Server) algoOf(paperID string) *algo {
	for i := 0; i < 50; i++ {
		s.mu.Lock()
		for _, a := range s.algos {
			if a.PaperID == paperID {
				cp := *a
				s.mu.Unlock()
				return &cp
			}
		}
		s.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}
