package sim

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/paper"
	hl "github.com/perpgate/perpgate/services/connectors/hyperliquid"
)

// The account subscriptions of the websocket
// (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions),
// each {"type":…,"user":"0x…"}, acknowledged on subscriptionResponse like
// the market ones and fed from the paper engine's events as they happen:
//   - orderUpdates: WsOrder[] = [{order: {coin, side, limitPx, sz, oid,
//     timestamp, origSz, cloid?, reduceOnly?}, status, statusTimestamp}]
//     on every change of an order (no snapshot).
//   - userFills: {user, fills: WsFill[], isSnapshot?}; the first message
//     is a snapshot of the latest fills (isSnapshot true).
//   - userFundings: {user, fundings: [{time, coin, usdc, szi, fundingRate,
//     nSamples}], isSnapshot?}; snapshot first, like userFills.
//   - userEvents (channel "user", as the venue names it,
//     github.com/nomeida/hyperliquid/issues/62): {fills} or {funding}.
//   - clearinghouseState: {dex, user, clearinghouseState} (the info
//     answer), at subscription and whenever a position or the balance
//     changes. Its shape is the nktkas SDK's
//     (src/api/subscription/_methods/clearinghouseState.ts); the docs page
//     in our corpus predates it (UNCONFIRMED there).
// Hyperliquid's account subscriptions need no login: they name an
// address. RefuseSubscriptions makes the simulator answer them on the
// error channel instead, {"channel":"error","data":"…"}, as the venue
// does when it will not track another user
// (github.com/nktkas/hyperliquid/issues/78: "Cannot track more than 10
// total users.").

var userChannels = map[string]bool{"orderUpdates": true, "userFills": true, "userFundings": true,
	"userEvents": true, "clearinghouseState": true}

// wsClient is one websocket: its subscriptions and its writer.
type wsClient struct {
	ws   *websocket.Conn
	ctx  context.Context
	mu   sync.Mutex // subs, snapped, and one writer at a time
	subs map[subscription]bool
	// snapped holds the fills a userFills snapshot sent: fills are
	// delivered after the fact, so one made before the subscription can
	// come after its snapshot, and Hyperliquid does not send it twice.
	snapped map[subscription]map[connector.Int]bool
}

// write sends {"channel","data"}; c.mu is held.
func (c *wsClient) write(channel string, data any) bool {
	b, err := json.Marshal(map[string]any{"channel": channel, "data": data})
	if err != nil {
		return true
	}
	wctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	return c.ws.Write(wctx, websocket.MessageText, b) == nil
}

// feed fans the engine's account events out to the sockets that follow
// their account. The engine calls sink under its lock, so events queue
// and one goroutine delivers them in order.
type feed struct {
	mu      sync.Mutex
	queue   []paper.Event
	wake    chan struct{}
	clients map[*wsClient]bool
	refuse  string // RefuseSubscriptions
}

func (f *feed) join(c *wsClient) {
	f.mu.Lock()
	f.clients[c] = true
	f.mu.Unlock()
}

func (f *feed) leave(c *wsClient) {
	f.mu.Lock()
	delete(f.clients, c)
	f.mu.Unlock()
}

func (s *Sim) sink(ev paper.Event) {
	s.feed.mu.Lock()
	s.feed.queue = append(s.feed.queue, ev)
	s.feed.mu.Unlock()
	select {
	case s.feed.wake <- struct{}{}:
	default:
	}
}

// dispatch delivers queued events for the simulator's lifetime.
func (s *Sim) dispatch() {
	for range s.feed.wake {
		s.feed.mu.Lock()
		batch := s.feed.queue
		s.feed.queue = nil
		s.feed.mu.Unlock()
		s.deliver(batch)
	}
}

// RefuseSubscriptions makes account subscriptions fail with msg on the
// error channel ("" accepts them again).
func (s *Sim) RefuseSubscriptions(msg string) {
	s.feed.mu.Lock()
	s.feed.refuse = msg
	s.feed.mu.Unlock()
}

// subscribeUser acknowledges an account subscription and sends its
// snapshot; c.mu is held.
func (s *Sim) subscribeUser(c *wsClient, req wsRequest) {
	s.feed.mu.Lock()
	refuse := s.feed.refuse
	s.feed.mu.Unlock()
	user := strings.ToLower(req.Subscription.User)
	if refuse != "" || !strings.HasPrefix(user, "0x") || len(user) != 42 {
		if refuse == "" {
			refuse = "Invalid subscription " + req.Subscription.Type
		}
		c.write("error", refuse)
		return
	}
	req.Subscription.User = user
	c.subs[req.Subscription] = true
	c.write("subscriptionResponse", req)
	switch req.Subscription.Type {
	case "userFills":
		fills := s.fills(user, false, 0, nil)
		sent := map[connector.Int]bool{}
		for _, f := range fills {
			sent[f.Tid] = true
		}
		c.snapped[req.Subscription] = sent
		c.write("userFills", map[string]any{"user": user, "fills": fills, "isSnapshot": true})
	case "userFundings":
		c.write("userFundings", map[string]any{"user": user, "fundings": s.fundings(user, 0), "isSnapshot": true})
	case "clearinghouseState":
		c.write("clearinghouseState", map[string]any{"dex": "", "user": user, "clearinghouseState": s.clearinghouse(user)})
	}
}

// toUser sends data to every socket subscribed to typ for user.
func (s *Sim) toUser(user, typ, channel string, data any) {
	s.toUserUnless(user, typ, channel, data, nil)
}

// toUserUnless is toUser without the sockets skip reports true for
// (c.mu is held when it is called).
func (s *Sim) toUserUnless(user, typ, channel string, data any, skip func(*wsClient, subscription) bool) {
	s.feed.mu.Lock()
	var to []*wsClient
	for c := range s.feed.clients {
		to = append(to, c)
	}
	s.feed.mu.Unlock()
	sub := subscription{Type: typ, User: user}
	for _, c := range to {
		c.mu.Lock()
		if c.subs[sub] && (skip == nil || !skip(c, sub)) {
			c.write(channel, data)
		}
		c.mu.Unlock()
	}
}

func (s *Sim) deliver(batch []paper.Event) {
	changed := map[string]bool{} // accounts whose clearinghouse state moved
	for _, ev := range batch {
		u := ev.Account
		switch ev.Kind {
		case paper.EventOrder:
			s.toUser(u, "orderUpdates", "orderUpdates", []any{s.wsOrder(*ev.Order)})
		case paper.EventFill:
			f := []hl.UserFill{s.userFill(*ev.Fill)}
			s.toUserUnless(u, "userFills", "userFills", map[string]any{"user": u, "fills": f},
				func(c *wsClient, sub subscription) bool { return c.snapped[sub][f[0].Tid] })
			s.toUser(u, "userEvents", "user", map[string]any{"fills": f})
		case paper.EventFunding:
			f := fundingEntry(*ev.Funding)
			s.toUser(u, "userFundings", "userFundings", map[string]any{"user": u, "fundings": []any{f}})
			s.toUser(u, "userEvents", "user", map[string]any{"funding": f})
		case paper.EventPosition, paper.EventBalance:
			changed[u] = true
		}
	}
	for u := range changed {
		s.toUser(u, "clearinghouseState", "clearinghouseState",
			map[string]any{"dex": "", "user": u, "clearinghouseState": s.clearinghouse(u)})
	}
}

// wsOrder is one WsOrder: the order as WsBasicOrder and its status, named
// as the orderStatus info request names them.
func (s *Sim) wsOrder(o paper.Order) map[string]any {
	s.mu.Lock()
	ex, known := s.extra[o.ID]
	s.mu.Unlock()
	oid, _ := strconv.ParseUint(o.ID, 10, 64)
	side := "A"
	if o.Side == paper.Buy {
		side = "B"
	}
	px := num(o.Price)
	if known && ex.limitPx != "" {
		px = ex.limitPx
	}
	basic := map[string]any{"coin": o.Market, "side": side, "limitPx": px, "sz": num(o.Size.Sub(o.FilledSize)),
		"oid": connector.Int(oid), "timestamp": o.CreatedAt.UnixMilli(), "origSz": num(o.Size)}
	if o.ClientOrderID != "" {
		basic["cloid"] = o.ClientOrderID
	}
	if o.ReduceOnly {
		basic["reduceOnly"] = true
	}
	status := orderStates[o.Status]
	switch {
	case o.Status == paper.Cancelled && o.PositionLinked && o.Reason != "":
		status = "siblingFilledCanceled"
	case o.Status == paper.Cancelled && strings.Contains(o.Reason, "reduce"):
		status = "reduceOnlyCanceled"
	case o.Status == paper.Cancelled && strings.Contains(o.Reason, "margin"):
		status = "marginCanceled"
	}
	return map[string]any{"order": basic, "status": status, "statusTimestamp": o.UpdatedAt.UnixMilli()}
}

// fundingEntry is one userFundings entry, as userFunding's delta.
func fundingEntry(p paper.FundingPayment) map[string]any {
	return map[string]any{"time": p.Time.UnixMilli(), "coin": p.Market, "usdc": num(p.Amount), "szi": num(p.PositionSize),
		"fundingRate": num(p.Rate), "nSamples": nil}
}

// fundings lists user's funding payments since start (ms), oldest first.
func (s *Sim) fundings(user string, start int64) []any {
	out := []any{}
	for _, e := range s.userFunding(user, start, nil) {
		d := e["delta"].(map[string]any)
		out = append(out, map[string]any{"time": e["time"], "coin": d["coin"], "usdc": d["usdc"], "szi": d["szi"],
			"fundingRate": d["fundingRate"], "nSamples": nil})
	}
	return out
}
