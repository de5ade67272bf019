package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
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
	c, release, err := s.ws.Accept(w, r, func(ws *websocket.Conn) *websocket.Conn { return ws }, nil)
	if err != nil {
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var mu sync.Mutex // subs, and one writer at a time
	subs := map[subscription]bool{}
	write := func(channel string, data any) bool {
		b, err := json.Marshal(map[string]any{"channel": channel, "data": data})
		if err != nil {
			return true
		}
		wctx, wc := context.WithTimeout(ctx, 5*time.Second)
		defer wc()
		return c.Write(wctx, websocket.MessageText, b) == nil
	}
	go func() {
		defer cancel()
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var req wsRequest
			if json.Unmarshal(data, &req) != nil {
				continue
			}
			mu.Lock()
			switch req.Method {
			case "ping":
				write("pong", nil)
			case "subscribe", "unsubscribe":
				if req.Method == "subscribe" {
					subs[req.Subscription] = true
				} else {
					delete(subs, req.Subscription)
				}
				write("subscriptionResponse", req)
			}
			mu.Unlock()
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
		mu.Lock()
		ok := true
		for sub := range subs {
			if ok {
				ok = s.push(sub, write)
			}
		}
		mu.Unlock()
		if !ok {
			return
		}
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
