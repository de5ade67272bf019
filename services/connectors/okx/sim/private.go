package sim

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit"
	"github.com/shopspring/decimal"
)

// The private websocket at /ws/v5/private
// (https://www.okx.com/docs-v5/en/#overview-websocket-login):
// {"op":"login","args":[{"apiKey","passphrase","timestamp","sign"}]} with
// timestamp in Unix seconds (refused 30 s after it) and sign the base64
// HMAC-SHA256 of timestamp+"GET"+"/users/self/verify", answered
// {"event":"login","code":"0","msg":"","connId":…} or {"event":"error",
// "code":"6000x","msg":…} (codes: #error-code-websocket-public). Channels,
// pushed from the paper engine's account changes as {"arg":{…},"data":[…]}:
//   - orders (#order-book-trading-trade-ws-order-channel): the order's
//     state after each change; a fill's push carries tradeId, fillSz,
//     fillPx, fillFee (negative when charged), fillFeeCcy, execType, fillPnl.
//   - positions (#trading-account-websocket-positions-channel): pos in
//     contracts, signed in net mode; a snapshot of the open positions
//     first.
//   - balance_and_position (#trading-account-websocket-balance-and-position-channel):
//     balData cashBal per currency with the positions a trade changed;
//     eventType snapshot first.
// Text "ping" is answered "pong". Stop orders rest as algo orders (the
// orders-algo channel, not served): the orders channel shows them once
// triggered, as OKX shows the order an algo placed.

type privHub struct {
	once    sync.Once
	sockets simkit.Sockets[*privConn]

	mu      sync.Mutex
	queue   []paper.Event
	wake    chan struct{}
	refuse  []Failure                   // answers of the next logins
	orders  map[string]paper.Order      // paper id → last state pushed
	pending map[string][]paper.Position // account → positions for the next balance push
}

type privConn struct {
	*simkit.Outbox
	mu       sync.Mutex
	apiKey   string
	channels map[string]bool
}

func (c *privConn) wants(apiKey, channel string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apiKey == apiKey && c.channels[channel]
}

func (h *privHub) init(s *Server) {
	h.once.Do(func() {
		h.wake = make(chan struct{}, 1)
		h.orders = map[string]paper.Order{}
		h.pending = map[string][]paper.Position{}
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

// RefuseNextLogin answers the next private login with OKX's error code
// and message (Failure.Code, Failure.Msg).
func (s *Server) RefuseNextLogin(f Failure) {
	s.priv.mu.Lock()
	s.priv.refuse = append(s.priv.refuse, f)
	s.priv.mu.Unlock()
}

// PrivateDials counts private sockets accepted so far.
func (s *Server) PrivateDials() int { return s.priv.sockets.Dials() }

// DropPrivate closes every private socket.
func (s *Server) DropPrivate() { s.priv.sockets.Drop() }

type privOp struct {
	Op   string            `json:"op"`
	Args []json.RawMessage `json:"args"`
}

func (s *Server) servePrivate(w http.ResponseWriter, r *http.Request) {
	s.priv.init(s)
	conn, release, err := s.priv.sockets.Accept(w, r, func(ws *websocket.Conn) *privConn {
		return &privConn{Outbox: simkit.NewOutbox(ws), channels: map[string]bool{}}
	}, nil)
	if err != nil {
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go conn.Run(ctx, cancel)
	connID := strconv.FormatInt(time.Now().UnixNano()%1e8, 16)
	for {
		_, data, err := conn.Conn().Read(ctx)
		if err != nil {
			return
		}
		if string(data) == "ping" {
			conn.Send([]byte("pong"))
			continue
		}
		var op privOp
		if json.Unmarshal(data, &op) != nil {
			conn.SendJSON(map[string]string{"event": "error", "code": "60012", "msg": "Invalid request: " + string(data), "connId": connID})
			continue
		}
		switch op.Op {
		case "login":
			if f := s.login(conn, op.Args); f != nil {
				conn.SendJSON(map[string]string{"event": "error", "code": f.Code, "msg": f.Msg, "connId": connID})
				continue
			}
			conn.SendJSON(map[string]string{"event": "login", "code": "0", "msg": "", "connId": connID})
		case "subscribe":
			s.subscribePrivate(conn, op.Args, connID)
		default:
			conn.SendJSON(map[string]string{"event": "error", "code": "60012", "msg": "Invalid request: " + string(data), "connId": connID})
		}
	}
}

// login checks a login op; nil when it passes.
func (s *Server) login(c *privConn, args []json.RawMessage) *Failure {
	s.priv.mu.Lock()
	if len(s.priv.refuse) > 0 {
		f := s.priv.refuse[0]
		s.priv.refuse = s.priv.refuse[1:]
		s.priv.mu.Unlock()
		return &f
	}
	s.priv.mu.Unlock()
	var a struct{ APIKey, Passphrase, Timestamp, Sign string }
	if len(args) != 1 || json.Unmarshal(args[0], &a) != nil {
		return &Failure{Code: "60012", Msg: "Invalid request"}
	}
	ts, err := strconv.ParseInt(a.Timestamp, 10, 64)
	if err != nil {
		return &Failure{Code: "60004", Msg: "Invalid timestamp"}
	}
	if d := s.cfg.Now().Sub(time.Unix(ts, 0)); d > timestampWindow || d < -timestampWindow {
		return &Failure{Code: "60006", Msg: "Timestamp request expired"}
	}
	k, ok := s.Secret(a.APIKey)
	if !ok {
		return &Failure{Code: "60005", Msg: "Invalid OK-ACCESS-KEY"}
	}
	if a.Passphrase != k.Passphrase {
		return &Failure{Code: "60024", Msg: "Wrong passphrase"}
	}
	m := hmac.New(sha256.New, []byte(k.Secret))
	m.Write([]byte(a.Timestamp + "GET/users/self/verify"))
	if !hmac.Equal([]byte(base64.StdEncoding.EncodeToString(m.Sum(nil))), []byte(a.Sign)) {
		return &Failure{Code: "60007", Msg: "Invalid sign"}
	}
	c.mu.Lock()
	c.apiKey = a.APIKey
	c.mu.Unlock()
	return nil
}

// subscribePrivate answers each channel and sends the snapshots OKX sends
// on subscription.
func (s *Server) subscribePrivate(c *privConn, args []json.RawMessage, connID string) {
	c.mu.Lock()
	key := c.apiKey
	c.mu.Unlock()
	for _, raw := range args {
		var arg map[string]string
		if json.Unmarshal(raw, &arg) != nil {
			c.SendJSON(map[string]string{"event": "error", "code": "60012", "msg": "Invalid request", "connId": connID})
			continue
		}
		if key == "" {
			c.SendJSON(map[string]string{"event": "error", "code": "60011", "msg": "Please log in", "connId": connID})
			continue
		}
		switch ch := arg["channel"]; ch {
		case "orders", "positions", "balance_and_position":
			c.mu.Lock()
			c.channels[ch] = true
			c.mu.Unlock()
			c.SendJSON(map[string]any{"event": "subscribe", "arg": arg, "connId": connID})
			s.snapshot(c, key, ch)
		default:
			c.SendJSON(map[string]string{"event": "error", "code": "60018", "msg": "Wrong URL or channel:" + ch + " doesn't exist.", "connId": connID})
		}
	}
}

func (s *Server) snapshot(c *privConn, key, channel string) {
	ps, _ := s.eng.Positions(key, "")
	switch channel {
	case "positions":
		var rows []any
		for _, p := range ps {
			rows = append(rows, s.positionRow(p))
		}
		if len(rows) > 0 {
			c.SendJSON(map[string]any{"arg": map[string]string{"channel": "positions", "instType": "SWAP"}, "data": rows})
		}
	case "balance_and_position":
		b, err := s.eng.Balance(key)
		if err != nil {
			return
		}
		c.SendJSON(s.balanceAndPosition("snapshot", b, ps))
	}
}

// dispatch turns the engine's events into private pushes, in order.
func (s *Server) dispatch() {
	h := &s.priv
	for range h.wake {
		h.mu.Lock()
		q := h.queue
		h.queue = nil
		h.mu.Unlock()
		for _, ev := range q {
			if ch, msg := s.privatePush(ev); msg != nil {
				s.pushTo(ev.Account, ch, msg)
			}
		}
	}
}

func (s *Server) pushTo(apiKey, channel string, msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		return
	}
	for _, c := range s.priv.sockets.Open() {
		if c.wants(apiKey, channel) {
			c.Send(b)
		}
	}
}

// unseenOrder is the order a fill belongs to when the hub started after
// the order was placed: the engine's order as it was before this fill.
func (s *Server) unseenOrder(account string, f paper.Fill) paper.Order {
	o, err := s.eng.Order(account, f.OrderID)
	if err != nil {
		o = paper.Order{ID: f.OrderID, ClientOrderID: f.ClientOrderID, Market: f.Market, Side: f.Side, Size: f.Size}
	}
	o.FilledSize = decimal.Max(o.FilledSize.Sub(f.Size), decimal.Zero)
	o.Status = paper.Open
	return o
}

func isStop(o paper.Order) bool {
	return o.Type == paper.StopMarket || o.Type == paper.TakeProfitMarket
}

// privatePush is ev as its channel pushes it, or nil when already told
// (a fill's order push carries the state the order event repeats) or
// waiting for the balance.
func (s *Server) privatePush(ev paper.Event) (string, any) {
	h := &s.priv
	switch ev.Kind {
	case paper.EventOrder:
		o := *ev.Order
		prev, seen := h.orders[o.ID]
		h.orders[o.ID] = o
		if isStop(o) && o.Status != paper.Filled {
			return "", nil // an algo order: orders-algo, not served
		}
		if seen && o.FilledSize.Equal(prev.FilledSize) && o.FilledSize.IsPositive() && o.Status != paper.Cancelled {
			return "", nil
		}
		return "orders", s.ordersPush(o, nil)
	case paper.EventFill:
		f := *ev.Fill
		if _, seen := h.orders[f.OrderID]; !seen {
			h.orders[f.OrderID] = s.unseenOrder(ev.Account, f)
		}
		o := h.orders[f.OrderID]
		o.FilledSize = o.FilledSize.Add(f.Size)
		o.AvgFillPrice = f.Price
		if prev := h.orders[f.OrderID].FilledSize; prev.IsPositive() {
			o.AvgFillPrice = prev.Mul(h.orders[f.OrderID].AvgFillPrice).Add(f.Size.Mul(f.Price)).DivRound(o.FilledSize, 8)
		}
		o.Fee = o.Fee.Add(f.Fee)
		if o.FilledSize.GreaterThanOrEqual(o.Size) {
			o.Status = paper.Filled
		}
		h.orders[f.OrderID] = o
		return "orders", s.ordersPush(o, &f)
	case paper.EventPosition:
		h.pending[ev.Account] = append(h.pending[ev.Account], *ev.Position)
		return "positions", map[string]any{"arg": map[string]string{"channel": "positions", "instType": "SWAP"},
			"data": []any{s.positionRow(*ev.Position)}}
	case paper.EventBalance:
		ps := h.pending[ev.Account]
		delete(h.pending, ev.Account)
		return "balance_and_position", s.balanceAndPosition("filled", *ev.Balance, ps)
	}
	return "", nil
}

// ordersPush is an orders channel push of o; f is the fill it reports.
func (s *Server) ordersPush(o paper.Order, f *paper.Fill) any {
	in := s.insts[o.Market]
	ordType := ""
	if isStop(o) {
		ordType = "market" // the order a triggered algo placed
	}
	row := map[string]string{}
	for k, v := range wireOrder(o, in, ordType) {
		row[k] = v
	}
	row["fillPx"], row["tradeId"], row["fillSz"], row["fillPnl"], row["fillTime"] = "", "", "0", "0", ""
	row["fillFee"], row["fillFeeCcy"], row["execType"], row["source"], row["category"] = "0", "", "", "", "normal"
	if f != nil {
		exec := "T"
		if f.Liquidity == paper.Maker {
			exec = "M"
		}
		row["fillPx"], row["tradeId"], row["fillSz"] = f.Price.String(), okxID(f.ID, fillOffset), contracts(f.Size, in).String()
		row["fillPnl"], row["fillTime"], row["fillFee"] = f.RealizedPnL.String(), ms(f.Time), f.Fee.Neg().String()
		row["fillFeeCcy"], row["execType"] = "USDT", exec
	}
	return map[string]any{"arg": map[string]string{"channel": "orders", "instType": "SWAP"}, "data": []any{row}}
}

// positionRow is a positions channel row; a closed position is pos "0".
func (s *Server) positionRow(p paper.Position) map[string]string {
	in := s.insts[p.Market]
	pos := contracts(p.Size, in)
	if p.Side == paper.Short {
		pos = pos.Neg()
	}
	avg := p.EntryPrice.String()
	if p.Side == paper.Flat {
		avg = ""
	}
	return map[string]string{"instType": "SWAP", "instId": p.Market, "mgnMode": "cross", "posSide": "net",
		"pos": pos.String(), "availPos": "", "avgPx": avg, "markPx": p.MarkPrice.String(), "upl": p.UnrealizedPnL.String(),
		"lever": strconv.Itoa(p.Leverage), "liqPx": "", "imr": p.Margin.String(), "ccy": "USDT", "notionalUsd": p.Notional.String(),
		"uTime": ms(s.cfg.Now()), "pTime": ms(s.cfg.Now())}
}

func (s *Server) balanceAndPosition(event string, b paper.Balance, ps []paper.Position) any {
	now := ms(s.cfg.Now())
	var pos []any
	for _, p := range ps {
		row := s.positionRow(p)
		pos = append(pos, map[string]string{"instId": row["instId"], "instType": "SWAP", "mgnMode": "cross", "posSide": "net",
			"pos": row["pos"], "ccy": "USDT", "posCcy": "", "avgPx": row["avgPx"], "uTime": now})
	}
	return map[string]any{"arg": map[string]string{"channel": "balance_and_position"}, "data": []any{map[string]any{
		"pTime": now, "eventType": event, "balData": []any{map[string]string{"ccy": "USDT", "cashBal": b.Wallet.String(), "uTime": now}},
		"posData": nonNilRows(pos), "trades": []any{}}}}
}

func nonNilRows(rows []any) []any {
	if rows == nil {
		return []any{}
	}
	return rows
}

func isPrivatePath(p string) bool { return strings.TrimSuffix(p, "/") == "/ws/v5/private" }

// pushDead tells the orders channel of a post-only order OKX accepted and
// cancelled at once (cancelSource 31); the engine never held it.
func (s *Server) pushDead(apiKey string, wire map[string]string) {
	row := map[string]string{"fillSz": "0", "tradeId": "", "fillPx": "", "fillFee": "0", "fillFeeCcy": "", "execType": "", "category": "normal"}
	for k, v := range wire {
		row[k] = v
	}
	s.pushTo(apiKey, "orders", map[string]any{"arg": map[string]string{"channel": "orders", "instType": "SWAP"}, "data": []any{row}})
}
