package sim

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

type wsClient struct {
	t *testing.T
	c *websocket.Conn
}

func dialSim(t *testing.T, s *Server) *wsClient {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return &wsClient{t: t, c: c}
}

func (w *wsClient) call(method, channel string, id int) {
	w.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": map[string]string{"channel": channel}, "id": id})
	if err := w.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
}

type msg struct {
	ID     *int `json:"id"`
	Method string
	Result *struct {
		Channel string `json:"channel"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Params struct {
		Channel string          `json:"channel"`
		Data    json.RawMessage `json:"data"`
	} `json:"params"`
}

// answer reads until the answer of id, counting data frames by channel.
func (w *wsClient) answer(id int, seen map[string]int) msg {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		_, b, err := w.c.Read(ctx)
		if err != nil {
			w.t.Fatalf("waiting for answer %d: %v", id, err)
		}
		var m msg
		if err := json.Unmarshal(b, &m); err != nil {
			w.t.Fatal(err)
		}
		if m.Method == "subscription" {
			seen[m.Params.Channel]++
			continue
		}
		if m.ID != nil && *m.ID == id {
			return m
		}
	}
}

// TestStreamJSONRPC: subscribe answers result.channel with the request's
// id; a second subscribe, an unknown channel and unsubscribing what is
// not subscribed are errors; data frames carry the documented shapes;
// after unsubscribe no more frames of that channel come.
func TestStreamJSONRPC(t *testing.T) {
	s := New(Config{})
	w := dialSim(t, s)
	seen := map[string]int{}
	const sum, book = "markets_summary.kPEPE-USD-PERP", "order_book.BTC-USD-PERP.snapshot@15@100ms"
	w.call("subscribe", sum, 1)
	if a := w.answer(1, seen); a.Result == nil || a.Result.Channel != sum || a.Error != nil {
		t.Fatalf("subscribe answer %+v", a)
	}
	w.call("subscribe", sum, 2)
	if a := w.answer(2, seen); a.Error == nil || a.Result != nil {
		t.Fatalf("second subscribe answered %+v", a)
	}
	w.call("subscribe", "markets_summary.1000PEPE-USD-PERP", 3)
	if a := w.answer(3, seen); a.Error == nil {
		t.Fatalf("a canonical (not Paradex) name was accepted: %+v", a)
	}
	w.call("unsubscribe", book, 4)
	if a := w.answer(4, seen); a.Error == nil {
		t.Fatalf("unsubscribing an unsubscribed channel answered %+v", a)
	}
	w.call("subscribe", book, 5)
	w.answer(5, seen)

	// Data frames: read a few of each.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var gotSum, gotBook bool
	for !gotSum || !gotBook {
		_, b, err := w.c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m msg
		_ = json.Unmarshal(b, &m)
		switch m.Params.Channel {
		case sum:
			var d map[string]any
			_ = json.Unmarshal(m.Params.Data, &d)
			if d["symbol"] != "kPEPE-USD-PERP" || d["mark_price"] == "" || d["funding_rate"] == nil || d["open_interest"] == nil || d["underlying_price"] == nil {
				t.Fatalf("summary frame %s", b)
			}
			gotSum = true
		case book:
			var d struct {
				Market     string `json:"market"`
				SeqNo      int64  `json:"seq_no"`
				UpdateType string `json:"update_type"`
				Inserts    []struct{ Side, Price, Size string }
				Updates    []any `json:"updates"`
				Deletes    []any `json:"deletes"`
			}
			_ = json.Unmarshal(m.Params.Data, &d)
			var bids, asks int
			for _, e := range d.Inserts {
				switch e.Side {
				case "BUY":
					bids++
				case "SELL":
					asks++
				}
			}
			if d.Market != "BTC-USD-PERP" || d.SeqNo == 0 || d.UpdateType != "s" || bids != 15 || asks != 15 || d.Updates == nil || d.Deletes == nil {
				t.Fatalf("book frame %s", b)
			}
			gotBook = true
		}
	}
	if got := s.StreamChannels(); len(got) != 2 || got[0] != sum || got[1] != book {
		t.Fatalf("channels %v", got)
	}
	w.call("unsubscribe", sum, 6)
	if a := w.answer(6, seen); a.Result == nil || a.Result.Channel != sum {
		t.Fatalf("unsubscribe answer %+v", a)
	}
	seen = map[string]int{}
	deadline := time.Now().Add(400 * time.Millisecond)
	for time.Now().Before(deadline) {
		rctx, rc := context.WithDeadline(context.Background(), deadline)
		_, b, err := w.c.Read(rctx)
		rc()
		if err != nil {
			break
		}
		var m msg
		_ = json.Unmarshal(b, &m)
		seen[m.Params.Channel]++
	}
	if seen[sum] != 0 || seen[book] == 0 {
		t.Fatalf("after unsubscribe: %v", seen)
	}
}
