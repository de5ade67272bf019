package paradex

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

var _ connector.Streamer = (*Adapter)(nil)

// Public websockets (https://docs.paradex.trade/ws/general-information/introduction,
// "Server URLs").
//
// Paradex's docs announce SBE (binary) payloads as required for public
// channels from 21 September 2026
// (https://docs.paradex.trade/ws/general-information/binary-encoding-sbe);
// this stream speaks the JSON payloads, so whether Paradex's own hosts
// still serve it is unconfirmed. Reads fall back to REST while the view
// gets no frames.
const (
	MainnetStreamURL = "wss://ws.api.prod.paradex.trade/v1"
	TestnetStreamURL = "wss://ws.api.testnet.paradex.trade/v1"
)

// bookChannelDepth is the order_book channel's depth: snapshot@15@100ms,
// 15 levels a side every 100 ms.
const bookChannelDepth = 15

// streamURL is env's public stream; a REST base that is not Paradex's own
// (a simulator or a proxy) serves it on the same host at its /v1 path.
func (c Config) streamURL(env contract.Environment) string {
	base := c.BaseURL(env)
	switch base {
	case DefaultMainnetURL:
		return MainnetStreamURL
	case DefaultTestnetURL:
		return TestnetStreamURL
	}
	return venuekit.WSURL(base)
}

// DialStream implements connector.Streamer: markets_summary.{market} and
// order_book.{market}.snapshot@15@100ms per market on one socket. Paradex
// pings every 55 s at the protocol level; the websocket library answers
// while Next reads.
func (a *Adapter) DialStream(ctx context.Context, env contract.Environment) (connector.StreamConn, error) {
	c, err := venuekit.Dial(ctx, "Paradex", a.cfg.streamURL(env))
	if err != nil {
		return nil, err
	}
	s := &stream{Socket: c, a: a}
	s.Subscriber = s.call
	return s, nil
}

// BookSnapshot implements connector.Streamer: GET /orderbook/{market} and
// its seq_no. The snapshot channel sends whole books, so the runtime only
// calls this if a frame is a change that does not follow.
func (a *Adapter) BookSnapshot(ctx context.Context, env contract.Environment, native string, _ int) (connector.BookUpdate, error) {
	var b struct {
		bookResp
		SeqNo int64 `json:"seq_no"`
	}
	c := connector.Credential{CredentialInfo: contract.CredentialInfo{Environment: env}}
	depth := bookChannelDepth
	if err := a.public(ctx, c, "/orderbook/"+url.PathEscape(native), url.Values{"depth": {strconv.Itoa(depth)}}, &b); err != nil {
		return connector.BookUpdate{}, err
	}
	return connector.BookUpdate{Snapshot: true, Depth: depth, Seq: b.SeqNo,
		Bids: venuekit.Levels(b.Bids, depth), Asks: venuekit.Levels(b.Asks, depth)}, nil
}

type stream struct {
	*venuekit.Socket
	venuekit.Subscriber
	a *Adapter
}

func channels(markets []string) []string {
	out := make([]string, 0, 2*len(markets))
	for _, m := range markets {
		out = append(out, "markets_summary."+m, "order_book."+m+".snapshot@"+strconv.Itoa(bookChannelDepth)+"@100ms")
	}
	return out
}

// call writes one JSON-RPC 2.0 request per channel
// (https://docs.paradex.trade/ws/general-information/subscription-channels):
// {"jsonrpc":"2.0","method":"subscribe","params":{"channel":…},"id":N}.
func (s *stream) call(ctx context.Context, method string, markets []string) error {
	for _, ch := range channels(markets) {
		if err := s.WriteJSON(ctx, map[string]any{"jsonrpc": "2.0", "method": method, "params": map[string]string{"channel": ch},
			"id": s.NextID()}); err != nil {
			return err
		}
	}
	return nil
}

// rpcFrame is any frame: a data frame {"jsonrpc","method":"subscription",
// "params":{"channel","data"}} (subscription-channels page; ccxt's
// pro/paradex handleTicker and handleOrderBook show the same), or an
// answer {"jsonrpc","result"|"error","id"} with no method.
type rpcFrame struct {
	Method string `json:"method"`
	Params struct {
		Channel string          `json:"channel"`
		Data    json.RawMessage `json:"data"`
	} `json:"params"`
}

// summaryFrame is markets_summary's data: the MarketSummary model of GET
// /markets/summary (https://docs.paradex.trade/ws/web-socket-channels/markets-summary/markets-summary).
type summaryFrame struct {
	Symbol          string `json:"symbol"`
	MarkPrice       dec    `json:"mark_price"`
	UnderlyingPrice dec    `json:"underlying_price"`
	FundingRate     dec    `json:"funding_rate"`
	OpenInterest    dec    `json:"open_interest"`
	CreatedAt       int64  `json:"created_at"`
}

// bookFrame is order_book's data
// (https://docs.paradex.trade/ws/web-socket-channels/order-book/order-book):
// update_type "s" (snapshot) with every level in inserts, as ccxt's
// pro/paradex handleOrderBook reads it; "d" (a change) is handled as one
// numbered by seq_no, though the snapshot channel is not known to send it.
type bookFrame struct {
	Market        string      `json:"market"`
	SeqNo         int64       `json:"seq_no"`
	LastUpdatedAt int64       `json:"last_updated_at"`
	UpdateType    string      `json:"update_type"`
	Inserts       []bookEntry `json:"inserts"`
	Updates       []bookEntry `json:"updates"`
	Deletes       []bookEntry `json:"deletes"`
}

type bookEntry struct {
	Side  string `json:"side"` // BUY or SELL
	Price dec    `json:"price"`
	Size  dec    `json:"size"`
}

// nullDec is v, invalid when empty.
func nullDec(v dec) decimal.NullDecimal {
	return decimal.NullDecimal{Decimal: v.Decimal, Valid: v.Given}
}

func (s *stream) Next(ctx context.Context) (connector.StreamEvent, error) {
	typ, data, err := s.Read(ctx)
	if err != nil {
		return connector.StreamEvent{}, err
	}
	if typ == websocket.MessageBinary {
		// Channel data as SBE: Paradex's binary encoding, which this
		// stream does not decode. The socket ends and reads use REST.
		return connector.StreamEvent{}, contract.Upstream(contract.ReasonUnknown, "", "",
			"Paradex stream sent a binary (SBE) frame; only JSON payloads are decoded")
	}
	return decodeFrame(data, s.a.c.now())
}

// decodeFrame turns one text frame into an event; now dates the next
// funding.
func decodeFrame(data []byte, now time.Time) (connector.StreamEvent, error) {
	var f rpcFrame
	if err := json.Unmarshal(data, &f); err != nil {
		return connector.StreamEvent{}, err
	}
	if f.Method != "subscription" {
		return connector.StreamEvent{}, nil // an answer: a heartbeat
	}
	ch := f.Params.Channel
	switch {
	case strings.HasPrefix(ch, "markets_summary"):
		var m summaryFrame
		if err := json.Unmarshal(f.Params.Data, &m); err != nil {
			return connector.StreamEvent{}, err
		}
		// Funding is continuous: the next time is the whole hour, as over REST.
		return connector.StreamEvent{Market: m.Symbol,
			Mark: &connector.MarkUpdate{MarkPrice: nullDec(m.MarkPrice), IndexPrice: nullDec(m.UnderlyingPrice)},
			Funding: &connector.FundingUpdate{Rate: nullDec(m.FundingRate), NextFundingTime: NextFundingTime(now),
				OpenInterest: nullDec(m.OpenInterest)}}, nil
	case strings.HasPrefix(ch, "order_book."):
		var b bookFrame
		if err := json.Unmarshal(f.Params.Data, &b); err != nil {
			return connector.StreamEvent{}, err
		}
		return connector.StreamEvent{Market: b.Market, Book: bookUpdate(b)}, nil
	}
	return connector.StreamEvent{}, nil
}

// bookUpdate turns a frame into a whole book, or a change numbered by
// seq_no whose deletes have size zero.
func bookUpdate(b bookFrame) *connector.BookUpdate {
	u := &connector.BookUpdate{Seq: b.SeqNo}
	add := func(es []bookEntry, del bool) {
		for _, e := range es {
			l := contract.Level{e.Price.D(), e.Size.D()}
			if del {
				l[1] = decimal.Zero
			}
			if e.Side == "BUY" {
				u.Bids = append(u.Bids, l)
			} else {
				u.Asks = append(u.Asks, l)
			}
		}
	}
	if b.UpdateType == "d" {
		u.First = b.SeqNo
		add(b.Inserts, false)
		add(b.Updates, false)
		add(b.Deletes, true)
		return u
	}
	u.Snapshot, u.Depth = true, bookChannelDepth
	add(b.Inserts, false)
	add(b.Updates, false)
	return u
}
