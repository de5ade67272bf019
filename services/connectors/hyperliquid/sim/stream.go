package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/connector"
)

// The websocket at /ws (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket
// and …/websocket/subscriptions; fact sheet §11): {"method":"subscribe",
// "subscription":{"type":"l2Book","coin":"BTC"}} (or activeAssetCtx) is
// acknowledged on channel subscriptionResponse; {"method":"ping"} is
// answered {"channel":"pong"}; data comes as {"channel":<type>,"data":…}.
// The simulator sends every subscription each streamEvery (a block is about
// that long) and at once when a test sets a mark.

const streamEvery = 500 * time.Millisecond

type subscription struct {
	Type string `json:"type"`
	Coin string `json:"coin,omitempty"`
	User string `json:"user,omitempty"` // account subscriptions (account.go)
}

type wsRequest struct {
	Method       string       `json:"method"`
	Subscription subscription `json:"subscription"`
}

// StreamDials counts websocket connections accepted so far.
func (s *Sim) StreamDials() int { return s.ws.Dials() }

// DropStreams closes every websocket.
func (s *Sim) DropStreams() { s.ws.Drop() }

func (s *Sim) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, release, err := s.ws.Accept(w, r, func(ws *websocket.Conn) *websocket.Conn { return ws }, nil)
	if err != nil {
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c := &wsClient{ws: ws, ctx: ctx, subs: map[subscription]bool{}, snapped: map[subscription]map[connector.Int]bool{}}
	s.feed.join(c)
	defer s.feed.leave(c)
	go func() {
		defer cancel()
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			var req wsRequest
			if json.Unmarshal(data, &req) != nil {
				continue
			}
			s.request(c, req)
		}
	}()
	t := time.NewTicker(streamEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.eng.Changed():
		}
		c.mu.Lock()
		ok, follows := true, false
		for sub := range c.subs {
			follows = follows || sub.User != ""
			if ok {
				ok = s.push(sub, c.write)
			}
		}
		c.mu.Unlock()
		if follows { // resting orders fill and funding settles while nobody calls
			s.eng.Tick()
		}
		if !ok {
			return
		}
	}
}

// request answers one client message: ping, subscribe or unsubscribe.
func (s *Sim) request(c *wsClient, req wsRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch req.Method {
	case "ping":
		c.write("pong", nil)
	case "subscribe":
		if userChannels[req.Subscription.Type] {
			s.subscribeUser(c, req)
			return
		}
		c.subs[req.Subscription] = true
		c.write("subscriptionResponse", req)
	case "unsubscribe":
		delete(c.subs, req.Subscription)
		c.write("subscriptionResponse", req)
	}
}

// push sends one subscription's current data: l2Book as the REST answer,
// activeAssetCtx as {"coin","ctx":{funding, openInterest, oraclePx,
// markPx, …}}.
func (s *Sim) push(sub subscription, write func(string, any) bool) bool {
	switch sub.Type {
	case "l2Book":
		if b := s.book(sub.Coin); b != nil {
			return write("l2Book", b)
		}
	case "activeAssetCtx":
		for i, a := range s.assets {
			if a.Name == sub.Coin {
				return write("activeAssetCtx", map[string]any{"coin": a.Name, "ctx": s.ctxs()[i]})
			}
		}
	}
	return true
}
