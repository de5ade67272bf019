package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/paper"
)

// The public websocket at /ws/v5/public
// (https://www.okx.com/docs-v5/en/#overview-websocket-subscribe):
// {"id":"1","op":"subscribe","args":[{"channel":"mark-price","instId":"BTC-USDT-SWAP"}]}
// acknowledged {"id":"1","event":"subscribe","arg":{…},"connId":…}; the
// plain text "ping" answered "pong"; pushes {"arg":{"channel","instId"},
// "data":[…]}. Channels:
//   - mark-price (#public-data-websocket-mark-price-channel): instType,
//     instId, markPx, ts; when it changes, else every 10 s.
//   - index-tickers (#public-data-websocket-index-tickers-channel), instId
//     the index (BTC-USDT): idxPx, ts; when it changes.
//   - funding-rate (#public-data-websocket-funding-rate-channel): instId,
//     fundingRate, fundingTime, nextFundingTime, ts; on subscription and
//     every 10 s here (OKX: 30 to 90 s).
//   - books5 (#order-book-trading-market-data-ws-order-book-channel): five
//     levels a side, [px, sz in contracts, "0", orders], instId, ts; every
//     100 ms.

type okxArg struct {
	Channel string `json:"channel"`
	InstID  string `json:"instId"`
}

type okxOp struct {
	ID   string   `json:"id"`
	Op   string   `json:"op"`
	Args []okxArg `json:"args"`
}

// StreamDials counts websocket connections accepted so far.
func (s *Server) StreamDials() int { return s.ws.Dials() }

// DropStreams closes every websocket.
func (s *Server) DropStreams() { s.ws.Drop() }

func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	c, release, err := s.ws.Accept(w, r, func(ws *websocket.Conn) *websocket.Conn { return ws }, nil)
	if err != nil {
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var mu sync.Mutex // subs, last and one writer at a time
	subs := map[okxArg]bool{}
	last := map[okxArg]string{} // what was last pushed, for "when it changes"
	sent := map[okxArg]time.Time{}
	write := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return true
		}
		if s, ok := v.(string); ok {
			b = []byte(s)
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
			mu.Lock()
			if string(data) == "ping" {
				write("pong")
				mu.Unlock()
				continue
			}
			var op okxOp
			if json.Unmarshal(data, &op) == nil {
				for _, a := range op.Args {
					if op.Op == "subscribe" {
						subs[a] = true
					} else {
						delete(subs, a)
					}
					delete(last, a)
					write(map[string]any{"id": op.ID, "event": op.Op, "arg": a, "connId": "sim"})
				}
			}
			mu.Unlock()
		}
	}()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.eng.Changed():
		}
		now := s.cfg.Now()
		mu.Lock()
		ok := true
		for a := range subs {
			data, every := s.channel(a, now)
			if data == nil {
				continue
			}
			ts := data["ts"]
			delete(data, "ts") // a change is a change of anything but the time
			b, _ := json.Marshal(data)
			data["ts"] = ts
			if every > 0 && last[a] == string(b) && now.Sub(sent[a]) < every {
				continue
			}
			last[a], sent[a] = string(b), now
			if ok {
				ok = write(map[string]any{"arg": a, "data": []any{data}})
			}
		}
		mu.Unlock()
		if !ok {
			return
		}
	}
}

// channel is a channel's current data and how often it is pushed when
// unchanged (0: every tick, changed or not).
func (s *Server) channel(a okxArg, now time.Time) (map[string]any, time.Duration) {
	switch a.Channel {
	case "mark-price":
		if m, err := s.eng.Market(a.InstID); err == nil {
			return map[string]any{"instType": "SWAP", "instId": a.InstID, "markPx": m.MarkPrice.String(), "ts": ms(now)}, 10 * time.Second
		}
	case "index-tickers":
		for _, id := range s.order {
			if in := s.insts[id]; in.Base+"-USDT" == a.InstID {
				m, _ := s.eng.Market(id)
				return map[string]any{"instId": a.InstID, "idxPx": m.IndexPrice.String(), "ts": ms(now)}, 10 * time.Second
			}
		}
	case "funding-rate":
		if f, err := s.eng.Funding(a.InstID); err == nil {
			return map[string]any{"instType": "SWAP", "instId": a.InstID, "fundingRate": f.Rate.String(),
				"fundingTime": ms(f.NextTime), "nextFundingTime": ms(f.NextTime.Add(f.Interval)), "ts": ms(now)}, 10 * time.Second
		}
	case "books5":
		in, ok := s.insts[a.InstID]
		b, err := s.eng.Orderbook(a.InstID, 5)
		if !ok || err != nil {
			return nil, 0
		}
		side := func(ls []paper.Level) [][]string {
			out := [][]string{}
			for _, l := range ls {
				out = append(out, []string{l.Price.String(), contracts(l.Size, in).String(), "0", "3"})
			}
			return out
		}
		// OKX pushes books5 every 100 ms.
		return map[string]any{"instId": a.InstID, "asks": side(b.Asks), "bids": side(b.Bids), "ts": ms(now)}, 0
	}
	return nil, 0
}
