package fapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/shopspring/decimal"
)

// The market streams a stream follows for each market.
const (
	MarkStream  = "@markPrice@1s"
	DepthStream = "@depth@100ms"
)

// Route is one market-data socket in combined mode (/stream) and the
// streams it carries for each market.
type Route struct {
	URL     string
	Streams []string
}

// DialStream opens one socket per route; the stream reads them all. The
// venues ping every few minutes and the websocket library answers while
// the sockets are read.
func DialStream(ctx context.Context, venue string, routes ...Route) (connector.StreamConn, error) {
	s := &stream{venue: venue, routes: routes, frames: make(chan frame, 512), done: make(chan struct{})}
	for _, r := range routes {
		c, err := venuekit.Dial(ctx, venue, r.URL)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.socks = append(s.socks, c)
		go s.read(c)
	}
	return s, nil
}

type frame struct {
	data []byte
	err  error
}

type stream struct {
	venue  string
	routes []Route
	socks  []*venuekit.Socket // one per route
	frames chan frame
	done   chan struct{}
	once   sync.Once
	id     atomic.Int64
}

func (s *stream) read(c *venuekit.Socket) {
	for {
		_, data, err := c.Read(context.Background())
		select {
		case s.frames <- frame{data: data, err: err}:
		case <-s.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (s *stream) Subscribe(ctx context.Context, markets []string) error {
	return s.send(ctx, "SUBSCRIBE", markets)
}

func (s *stream) Unsubscribe(ctx context.Context, markets []string) error {
	return s.send(ctx, "UNSUBSCRIBE", markets)
}

// send writes one live (un)subscription per socket:
// {"method":"SUBSCRIBE","params":["btcusdt@markPrice@1s",...],"id":1}.
func (s *stream) send(ctx context.Context, method string, markets []string) error {
	for i, r := range s.routes {
		names := make([]string, 0, len(markets)*len(r.Streams))
		for _, m := range markets {
			for _, suffix := range r.Streams {
				names = append(names, strings.ToLower(m)+suffix)
			}
		}
		b, _ := json.Marshal(map[string]any{"method": method, "params": names, "id": s.id.Add(1)})
		if err := s.socks[i].WriteText(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

func (s *stream) Close() error {
	s.once.Do(func() {
		close(s.done)
		for _, c := range s.socks {
			c.Close()
		}
	})
	return nil
}

func (s *stream) Next(ctx context.Context) (connector.StreamEvent, error) {
	select {
	case f := <-s.frames:
		if f.err != nil {
			return connector.StreamEvent{}, f.err
		}
		return StreamEvent(f.data)
	case <-s.done:
		return connector.StreamEvent{}, errors.New(strings.ToLower(s.venue) + " stream closed")
	case <-ctx.Done():
		return connector.StreamEvent{}, ctx.Err()
	}
}

// combined is a combined-stream frame {"stream":..., "data":...}; other
// frames (subscription answers {"result":null,"id":1}) only show the
// socket is alive.
type combined struct {
	Stream string          `json:"stream"`
	Data   json.RawMessage `json:"data"`
}

// streamPayload holds the fields of markPriceUpdate and depthUpdate. Keys
// differing only in case are all declared: encoding/json would otherwise
// match "E" to the field of "e".
type streamPayload struct {
	Event     string               `json:"e"`
	EventTime int64                `json:"E"`
	TxTime    int64                `json:"T"` // depth: transaction time; mark: next funding time
	Symbol    string               `json:"s"`
	Mark      decimal.NullDecimal  `json:"p"`
	Settle    decimal.NullDecimal  `json:"P"`
	Index     decimal.NullDecimal  `json:"i"`
	Rate      decimal.NullDecimal  `json:"r"`
	First     int64                `json:"U"`
	Final     int64                `json:"u"`
	Prev      int64                `json:"pu"`
	Bids      [][2]decimal.Decimal `json:"b"`
	Asks      [][2]decimal.Decimal `json:"a"`
}

// StreamEvent reads one frame of the combined market streams
// (<symbol>@markPrice@1s, <symbol>@depth@100ms).
func StreamEvent(data []byte) (connector.StreamEvent, error) {
	var c combined
	if err := json.Unmarshal(data, &c); err != nil {
		return connector.StreamEvent{}, err
	}
	if c.Stream == "" {
		return connector.StreamEvent{}, nil
	}
	var p streamPayload
	if err := json.Unmarshal(c.Data, &p); err != nil {
		return connector.StreamEvent{}, err
	}
	switch p.Event {
	case "markPriceUpdate":
		return connector.StreamEvent{Market: p.Symbol,
			Mark:    &connector.MarkUpdate{MarkPrice: p.Mark, IndexPrice: p.Index},
			Funding: &connector.FundingUpdate{Rate: p.Rate, NextFundingTime: p.TxTime / 1000}}, nil
	case "depthUpdate":
		return connector.StreamEvent{Market: p.Symbol, Book: &connector.BookUpdate{First: p.First, Seq: p.Final, Prev: p.Prev,
			Bids: Levels(p.Bids, len(p.Bids)), Asks: Levels(p.Asks, len(p.Asks))}}, nil
	}
	return connector.StreamEvent{}, nil
}
