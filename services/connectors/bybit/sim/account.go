package sim

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit"
)

// The private websocket at /v5/private
// (https://bybit-exchange.github.io/docs/v5/ws/connect, "Authentication"):
// {"op":"auth","args":[apiKey, expires, signature]} where signature is the
// hex HMAC-SHA256 of "GET/realtime"+expires and expires (ms) is still in
// the future, answered {"success":true,"ret_msg":"","op":"auth",…}; then
// {"op":"subscribe","args":["order","execution","position","wallet"]}.
// Pushes are {"id","topic","creationTime","data":[…]} with the rows of
// …/websocket/private/order, /execution (execType Trade or Funding),
// /position and /wallet, taken from the paper engine's account changes.
// The refusal texts ("Params Error" for an expired expires, "Invalid
// apikey", "Request not authorized" for a bad signature) are what clients
// report seeing (bybit-exchange/api-usage-examples#70, pybit#300); the
// page itself does not list them.

type privHub struct {
	once    sync.Once
	sockets simkit.Sockets[*privConn]

	mu     sync.Mutex
	queue  []paper.Event
	wake   chan struct{}
	refuse []string // ret_msg of the next auth answers
	seq    int64
}

type privConn struct {
	*simkit.Outbox
	mu     sync.Mutex
	apiKey string // once authenticated
	topics map[string]bool
}

func (c *privConn) wants(apiKey, topic string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apiKey == apiKey && c.topics[topic]
}

func (h *privHub) init(s *Server) {
	h.once.Do(func() {
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

// RefuseNextAuth answers the next private auth with success false and
// msg, as Bybit does for a key it does not accept.
func (s *Server) RefuseNextAuth(msg string) {
	s.priv.mu.Lock()
	s.priv.refuse = append(s.priv.refuse, msg)
	s.priv.mu.Unlock()
}

// PrivateDials counts private sockets accepted so far.
func (s *Server) PrivateDials() int { return s.priv.sockets.Dials() }

// PrivateOpen counts private sockets open now.
func (s *Server) PrivateOpen() int { return len(s.priv.sockets.Open()) }

// DropPrivate closes every private socket.
func (s *Server) DropPrivate() { s.priv.sockets.Drop() }

type privOp struct {
	Op    string            `json:"op"`
	Args  []json.RawMessage `json:"args"`
	ReqID string            `json:"req_id"`
}

func (s *Server) servePrivate(w http.ResponseWriter, r *http.Request) {
	s.priv.init(s)
	conn, release, err := s.priv.sockets.Accept(w, r, func(ws *websocket.Conn) *privConn {
		return &privConn{Outbox: simkit.NewOutbox(ws), topics: map[string]bool{}}
	}, nil)
	if err != nil {
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go conn.Run(ctx, cancel)
	connID := strconv.FormatInt(time.Now().UnixNano(), 36) + "-private"
	for {
		_, data, err := conn.Conn().Read(ctx)
		if err != nil {
			return
		}
		var op privOp
		if json.Unmarshal(data, &op) != nil {
			continue
		}
		reply := map[string]any{"success": true, "ret_msg": "", "op": op.Op, "conn_id": connID, "req_id": op.ReqID}
		switch op.Op {
		case "auth":
			if msg := s.authPrivate(conn, op.Args); msg != "" {
				reply["success"], reply["ret_msg"] = false, msg
			}
		case "subscribe":
			if msg := subscribePrivate(conn, op.Args); msg != "" {
				reply["success"], reply["ret_msg"] = false, msg
			}
		case "ping":
			reply = map[string]any{"req_id": op.ReqID, "op": "pong", "args": []string{strconv.FormatInt(s.cfg.Now().UnixMilli(), 10)}, "conn_id": connID}
		default:
			reply["success"], reply["ret_msg"] = false, "error:invalid op"
		}
		conn.SendJSON(reply)
	}
}

// authPrivate checks an auth op; "" when it passes.
func (s *Server) authPrivate(c *privConn, args []json.RawMessage) string {
	s.priv.mu.Lock()
	if len(s.priv.refuse) > 0 {
		msg := s.priv.refuse[0]
		s.priv.refuse = s.priv.refuse[1:]
		s.priv.mu.Unlock()
		return msg
	}
	s.priv.mu.Unlock()
	if len(args) != 3 {
		return "Params Error"
	}
	var apiKey, sig string
	var expires json.Number
	if json.Unmarshal(args[0], &apiKey) != nil || json.Unmarshal(args[2], &sig) != nil || unmarshalNumber(args[1], &expires) != nil {
		return "Params Error"
	}
	exp, err := expires.Int64()
	if err != nil || exp <= s.cfg.Now().UnixMilli() {
		return "Params Error"
	}
	secret, ok := s.Secret(apiKey)
	if !ok {
		return "Invalid apikey"
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("GET/realtime" + expires.String()))
	if !hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(sig)) {
		return "Request not authorized"
	}
	c.mu.Lock()
	c.apiKey = apiKey
	c.mu.Unlock()
	return ""
}

// unmarshalNumber reads expires sent as a number or a string.
func unmarshalNumber(raw json.RawMessage, n *json.Number) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		*n = json.Number(s)
		return nil
	}
	return json.Unmarshal(raw, n)
}

func subscribePrivate(c *privConn, args []json.RawMessage) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.apiKey == "" {
		return "Request not authorized"
	}
	for _, a := range args {
		var topic string
		if json.Unmarshal(a, &topic) != nil {
			return "Params Error"
		}
		switch topic {
		case "order", "execution", "position", "wallet":
			c.topics[topic] = true
		default:
			return "error:handler not found,topic:" + topic
		}
	}
	return ""
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
			if topic, row := s.privateRow(ev); row != nil {
				s.push(ev.Account, topic, row, ev.Time)
			}
		}
	}
}

func (s *Server) push(apiKey, topic string, row map[string]any, at time.Time) {
	s.priv.mu.Lock()
	s.priv.seq++
	id := strconv.FormatInt(s.priv.seq, 10)
	s.priv.mu.Unlock()
	b, err := json.Marshal(map[string]any{"id": id, "topic": topic, "creationTime": at.UnixMilli(), "data": []any{row}})
	if err != nil {
		return
	}
	for _, c := range s.priv.sockets.Open() {
		if c.wants(apiKey, topic) {
			c.Send(b)
		}
	}
}

// privateRow is ev as a row of its topic.
func (s *Server) privateRow(ev paper.Event) (string, map[string]any) {
	switch ev.Kind {
	case paper.EventOrder:
		bo := s.bybitOrderOf(ev.Account, ev.Order.ID)
		if bo == nil {
			return "", nil
		}
		row := orderRow(bo, *ev.Order)
		row["category"], row["feeCurrency"], row["closedPnl"] = "linear", "USDT", "0"
		return "order", row
	case paper.EventFill:
		f := ev.Fill
		s.mu.Lock()
		bid := s.byPaper[ev.Account+" "+f.OrderID]
		s.mu.Unlock()
		side := "Buy"
		if f.Side == paper.Sell {
			side = "Sell"
		}
		return "execution", map[string]any{"category": "linear", "symbol": f.Market, "orderId": bid, "orderLinkId": f.ClientOrderID,
			"side": side, "execFee": f.Fee.String(), "feeCurrency": "USDT", "execId": uuid.NewSHA1(uuid.NameSpaceOID, []byte(f.ID)).String(),
			"execPrice": f.Price.String(), "execQty": f.Size.String(), "execType": "Trade", "execValue": f.Size.Mul(f.Price).String(),
			"execTime": strconv.FormatInt(f.Time.UnixMilli(), 10), "isMaker": f.Liquidity == paper.Maker,
			"closedSize": "0", "feeRate": "0", "seq": 0}
	case paper.EventFunding:
		p := ev.Funding
		// A funding row's execFee is what the account paid: the engine's
		// amount (negative when paid) negated.
		return "execution", map[string]any{"category": "linear", "symbol": p.Market, "orderId": "", "orderLinkId": "", "side": "Sell",
			"execFee": p.Amount.Neg().String(), "feeCurrency": "USDT", "execId": "funding-" + p.Market + "-" + strconv.FormatInt(p.Time.UnixMilli(), 10),
			"execPrice": "0", "execQty": p.PositionSize.Abs().String(), "execType": "Funding", "feeRate": p.Rate.String(),
			"execTime": strconv.FormatInt(p.Time.UnixMilli(), 10), "isMaker": false, "seq": 0}
	case paper.EventPosition:
		p := ev.Position
		var pos *paper.Position
		if p.Side != paper.Flat {
			pos = p
		}
		row := positionRow(p.Market, 0, pos, p.Leverage, ev.Time)
		row["category"], row["entryPrice"] = "linear", row["avgPrice"]
		return "position", row
	case paper.EventBalance:
		return "wallet", walletRow(*ev.Balance)
	}
	return "", nil
}

// bybitOrderOf finds the order resting as paper id; placement registers it
// just after the engine took it, so wait a moment for it.
func (s *Server) bybitOrderOf(apiKey, paperID string) *bybitOrder {
	for range 50 {
		s.mu.Lock()
		bo := s.orders[s.byPaper[apiKey+" "+paperID]]
		s.mu.Unlock()
		if bo != nil {
			return bo
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

// pushFrozen tells the order topic of a post-only order Bybit accepted and
// cancelled at once (rejectReason EC_PostOnlyWillTakeLiquidity); the
// engine never held it, so no engine event does.
func (s *Server) pushFrozen(apiKey string, bo *bybitOrder) {
	row := orderRow(bo, *bo.frozen)
	row["category"], row["feeCurrency"], row["closedPnl"] = "linear", "USDT", "0"
	s.push(apiKey, "order", row, bo.Created)
}
