package bybit

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

var (
	_ connector.Streamer    = (*Adapter)(nil)
	_ connector.StreamScope = (*Adapter)(nil)
)

// Public linear websockets (fact sheet §10).
const (
	MainnetStreamURL = "wss://stream.bybit.com/v5/public/linear"
	TestnetStreamURL = "wss://stream-testnet.bybit.com/v5/public/linear"
)

// pingEvery follows Bybit's advice to ping every 20 s.
const pingEvery = 20 * time.Second

// streamDepth is the book topic's depth: orderbook.50 (20 ms pushes).
const streamDepth = 50

// streamURL is env's public stream; a REST base that is not Bybit's own (a
// simulator) serves it on the same host.
func (c Config) streamURL(env contract.Environment) string {
	base := c.baseURL(env, false)
	switch base {
	case DefaultMainnetURL:
		return MainnetStreamURL
	case DefaultTestnetURL:
		return TestnetStreamURL
	}
	return venuekit.WSURL(base) + "/v5/public/linear"
}

// StreamsFor implements connector.StreamScope: demo accounts trade on demo
// prices, which no public stream carries, so their reads stay on REST.
func (a *Adapter) StreamsFor(c connector.Credential) bool { return !demo(c) }

// DialStream implements connector.Streamer.
func (a *Adapter) DialStream(ctx context.Context, env contract.Environment) (connector.StreamConn, error) {
	c, err := venuekit.Dial(ctx, "Bybit", a.cfg.streamURL(env))
	if err != nil {
		return nil, err
	}
	s := &stream{Socket: c}
	s.Subscriber = func(ctx context.Context, op string, markets []string) error { return s.op(ctx, op, topics(markets)) }
	c.Keepalive(pingEvery, func(ctx context.Context) error { return s.op(ctx, "ping", nil) })
	return s, nil
}

// BookSnapshot implements connector.Streamer: GET /v5/market/orderbook,
// whose u the stream's deltas continue.
func (a *Adapter) BookSnapshot(ctx context.Context, env contract.Environment, native string, n int) (connector.BookUpdate, error) {
	var b struct {
		book
		U int64 `json:"u"`
	}
	c := connector.Credential{CredentialInfo: contract.CredentialInfo{Environment: env}}
	q := params{}.Add("category", "linear").Add("symbol", native).Add("limit", strconv.Itoa(streamDepth))
	if err := a.public(ctx, c, "/v5/market/orderbook", q, &b); err != nil {
		return connector.BookUpdate{}, err
	}
	return connector.BookUpdate{Snapshot: true, Depth: streamDepth, Seq: b.U,
		Bids: levels(b.Bids, streamDepth), Asks: levels(b.Asks, streamDepth)}, nil
}

type stream struct {
	*venuekit.Socket
	venuekit.Subscriber
}

// op writes {"op":…, "args":[…], "req_id":…}.
func (s *stream) op(ctx context.Context, op string, args []string) error {
	return s.WriteJSON(ctx, map[string]any{"op": op, "args": args, "req_id": strconv.FormatInt(s.NextID(), 10)})
}

func topics(markets []string) []string {
	out := make([]string, 0, 2*len(markets))
	for _, m := range markets {
		out = append(out, "tickers."+m, "orderbook."+strconv.Itoa(streamDepth)+"."+m)
	}
	return out
}

// wsFrame is any frame of Bybit's sockets, public or private: an op
// answer (op, success, ret_msg; pongs too) or a topic push {"topic",
// "type":"snapshot"|"delta","creationTime","data"}.
type wsFrame struct {
	Op           string          `json:"op"`
	Success      bool            `json:"success"`
	RetMsg       string          `json:"ret_msg"`
	Topic        string          `json:"topic"`
	Type         string          `json:"type"`
	CreationTime int64           `json:"creationTime"`
	Data         json.RawMessage `json:"data"`
}

// tickerDelta holds the fields a ticker push may carry; a delta carries
// only those that changed, so each is optional.
type tickerDelta struct {
	Symbol          string        `json:"symbol"`
	MarkPrice       dec           `json:"markPrice"`
	IndexPrice      dec           `json:"indexPrice"`
	FundingRate     dec           `json:"fundingRate"`
	NextFundingTime connector.Int `json:"nextFundingTime"`
	OpenInterest    dec           `json:"openInterest"`
}

type bookPush struct {
	Symbol string   `json:"s"`
	Bids   [][2]dec `json:"b"`
	Asks   [][2]dec `json:"a"`
	U      int64    `json:"u"`
}

func (s *stream) Next(ctx context.Context) (connector.StreamEvent, error) {
	_, data, err := s.Read(ctx)
	if err != nil {
		return connector.StreamEvent{}, err
	}
	var p wsFrame
	if err := json.Unmarshal(data, &p); err != nil {
		return connector.StreamEvent{}, err
	}
	switch {
	case strings.HasPrefix(p.Topic, "tickers."):
		var t tickerDelta
		if err := json.Unmarshal(p.Data, &t); err != nil {
			return connector.StreamEvent{}, err
		}
		return connector.StreamEvent{Market: t.Symbol,
			Mark: &connector.MarkUpdate{MarkPrice: venuekit.Null(t.MarkPrice), IndexPrice: venuekit.Null(t.IndexPrice)},
			Funding: &connector.FundingUpdate{Rate: venuekit.Null(t.FundingRate), NextFundingTime: msToSeconds(t.NextFundingTime),
				OpenInterest: venuekit.Null(t.OpenInterest)}}, nil
	case strings.HasPrefix(p.Topic, "orderbook."):
		var b bookPush
		if err := json.Unmarshal(p.Data, &b); err != nil {
			return connector.StreamEvent{}, err
		}
		u := connector.BookUpdate{Bids: levels(b.Bids, len(b.Bids)), Asks: levels(b.Asks, len(b.Asks)), Seq: b.U}
		if p.Type == "snapshot" {
			u.Snapshot, u.Depth = true, streamDepth
		} else {
			// u goes up by one per message (Bybit: "u" is a sequence).
			u.Prev, u.First = b.U-1, b.U
		}
		return connector.StreamEvent{Market: b.Symbol, Book: &u}, nil
	}
	return connector.StreamEvent{}, nil
}
