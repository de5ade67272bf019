package sim

import (
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
)

// The private channels of the websocket at /v1
// (https://docs.paradex.trade/ws/general-information/connection-authentication,
// the AsyncAPI spec fern/apis/prod_ws/asyncapi-2.6.0.yaml of
// tradeparadex/paradex-docs): {"jsonrpc":"2.0","method":"auth",
// "params":{"bearer":<JWT from POST /auth>},"id":0} answered
// {"result":{"node_id":…}}, or the error 40110 "Malformed Bearer Token" /
// 40111 "Invalid Bearer Token" (…/ws/general-information/error-handling).
// Once authenticated a socket stays so for its lifetime (authentication
// page: "you do not need to re-authenticate"). Then, fed from the engine's
// events as they happen, each payload the REST model of the same thing:
//   - orders.{market} (orders.ALL: every market): OrderResp on every
//     change, NEW at acceptance included.
//   - fills.{market}: FillResult.
//   - positions: PositionResp (status CLOSED once flat).
//   - account: AccountSummaryResponse.
//   - funding_payments.{market}: FundingPayment {id, account, market,
//     payment, index, fill_id, created_at}.
// Subscribing to a private channel before auth is an error (code -32600
// here; the venue's code is UNCONFIRMED). RefuseStreamAuth makes auth
// fail with 40111 whatever the token, as a venue that stopped accepting
// the account would.

// feed queues private-channel messages in the order things happened and
// one goroutine sends them. The engine reports under its lock, so its
// events are rendered when sent.
type feed struct {
	mu      sync.Mutex
	queue   []item
	wake    chan struct{}
	refuse  string // RefuseStreamAuth
	barrier sync.Mutex
}

// item is an engine event or a message rendered already.
type item struct {
	ev      *paper.Event
	account string
	prefix  string // channel without its market
	market  string
	data    any
}

func (f *feed) add(it item) {
	f.mu.Lock()
	f.queue = append(f.queue, it)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *feed) engineEvent(ev paper.Event) { f.add(item{ev: &ev, account: ev.Account}) }

// push queues one rendered message for account's sockets.
func (f *feed) push(account, prefix, market string, data any) {
	f.add(item{account: account, prefix: prefix, market: market, data: data})
}

// RefuseStreamAuth makes the websocket's auth method fail with 40111 and
// msg ("" accepts tokens again).
func (s *Server) RefuseStreamAuth(msg string) {
	s.feed.mu.Lock()
	s.feed.refuse = msg
	s.feed.mu.Unlock()
}

// private reports whether ch is an account channel.
func private(ch string) bool {
	switch ch {
	case "positions", "account":
		return true
	}
	for _, p := range []string{"orders.", "fills.", "funding_payments."} {
		if strings.HasPrefix(ch, p) {
			return true
		}
	}
	return false
}

// knownPrivate: an account channel of a listed market, or ALL.
func (s *Server) knownPrivate(ch string) bool {
	_, m, found := strings.Cut(ch, ".")
	if !found || m == "ALL" {
		return true
	}
	_, e := s.market(m)
	return e == nil
}

func (s *Server) streamAuth(conn *wsConn, q rpcReq, in time.Time) {
	s.feed.mu.Lock()
	refuse := s.feed.refuse
	s.feed.mu.Unlock()
	fail := func(code int, msg string) {
		conn.SendJSON(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": code, "message": msg}, "id": q.ID})
	}
	if refuse != "" {
		fail(40111, refuse)
		return
	}
	if strings.Count(q.Params.Bearer, ".") != 2 {
		fail(40110, "Malformed Bearer Token")
		return
	}
	acct, e := s.checkJWT(q.Params.Bearer, s.cfg.Now())
	if e != nil {
		fail(40111, "Invalid Bearer Token")
		return
	}
	conn.mu.Lock()
	conn.account = acct
	conn.mu.Unlock()
	conn.SendJSON(map[string]any{"jsonrpc": "2.0", "result": map[string]string{"node_id": "paradex-sim"},
		"usIn": in.UnixMicro(), "usDiff": time.Since(in).Microseconds(), "id": q.ID})
}

// following reports whether a socket listens to an account.
func following(conns []*wsConn) bool {
	for _, c := range conns {
		c.mu.Lock()
		acct := c.account
		c.mu.Unlock()
		if acct != "" {
			return true
		}
	}
	return false
}

// dispatch sends queued messages for the simulator's lifetime.
func (s *Server) dispatch() {
	for range s.feed.wake {
		// A placement still mapping its Paradex id holds the barrier.
		s.feed.barrier.Lock()
		s.feed.barrier.Unlock() //nolint:staticcheck // a barrier, not a critical section
		s.feed.mu.Lock()
		batch := s.feed.queue
		s.feed.queue = nil
		s.feed.mu.Unlock()
		for _, it := range batch {
			if it.ev != nil {
				it = s.render(*it.ev)
			}
			if it.prefix != "" {
				s.send(it)
			}
		}
	}
}

// render turns an engine event into its channel message; an order the
// REST API did not place renders as nothing.
func (s *Server) render(ev paper.Event) item {
	it := item{account: ev.Account}
	switch ev.Kind {
	case paper.EventOrder:
		s.mu.Lock()
		o := s.orders[s.byPaper[ev.Account+" "+ev.Order.ID]]
		s.mu.Unlock()
		if o != nil {
			it.prefix, it.market, it.data = "orders", o.Req.Market, s.row(o, ev.Order)
		}
	case paper.EventFill:
		s.mu.Lock()
		it.prefix, it.market, it.data = "fills", ev.Fill.Market, s.fillRow(ev.Account, *ev.Fill)
		s.mu.Unlock()
	case paper.EventPosition:
		it.prefix, it.data = "positions", s.positionRow(ev.Account, *ev.Position, ev.Time)
	case paper.EventBalance:
		it.prefix, it.data = "account", accountRow(ev.Account, *ev.Balance, ev.Time)
	case paper.EventFunding:
		p, ms := ev.Funding, ev.Funding.Time.UnixMilli()
		it.prefix, it.market = "funding_payments", p.Market
		it.data = map[string]any{"id": p.Market + "-" + time.UnixMilli(ms).UTC().Format("20060102150405.000"), "account": ev.Account,
			"market": p.Market, "payment": p.Amount.String(), "index": "0", "fill_id": "", "created_at": ms}
	}
	return it
}

// send writes it to the account's sockets on the channel they took: the
// market's own or .ALL.
func (s *Server) send(it item) {
	for _, c := range s.hub.sockets.Open() {
		c.mu.Lock()
		acct := c.account
		ch := it.prefix
		if it.market != "" {
			ch = it.prefix + "." + it.market
			if !c.subs[ch] {
				ch = it.prefix + ".ALL"
			}
		}
		subscribed := c.subs[ch]
		c.mu.Unlock()
		if acct == it.account && subscribed {
			c.SendJSON(frame(ch, it.data))
		}
	}
}
