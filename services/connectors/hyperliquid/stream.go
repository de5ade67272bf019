package hyperliquid

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

var _ connector.Streamer = (*Adapter)(nil)

// Websocket bases (fact sheet §1, §11).
const (
	MainnetWS = "wss://api.hyperliquid.xyz/ws"
	TestnetWS = "wss://api.hyperliquid-testnet.xyz/ws"
)

// pingEvery keeps the socket open: the venue drops one that sent nothing
// for about 60 s (the SDK pings every 50 s).
const pingEvery = venuekit.PingEvery

// l2Depth is how many levels per side l2Book carries (fact sheet §12).
const l2Depth = 20

func (a *Adapter) streamURL(env contract.Environment) string {
	if a.cfg.URL != "" {
		return venuekit.WSURL(a.cfg.URL) + "/ws"
	}
	if env == contract.Mainnet {
		return MainnetWS
	}
	return TestnetWS
}

// DialStream implements connector.Streamer: one socket with l2Book and
// activeAssetCtx per coin.
func (a *Adapter) DialStream(ctx context.Context, env contract.Environment) (connector.StreamConn, error) {
	c, err := venuekit.DialPinged(ctx, "Hyperliquid", a.streamURL(env), []byte(`{"method":"ping"}`))
	if err != nil {
		return nil, err
	}
	s := &stream{Socket: c, now: a.now}
	s.Subscriber = s.send
	return s, nil
}

// BookSnapshot implements connector.Streamer: l2Book sends whole books and
// has no sequence numbers, so there is no gap to resync.
func (a *Adapter) BookSnapshot(context.Context, contract.Environment, string, int) (connector.BookUpdate, error) {
	return connector.BookUpdate{}, errors.New("hyperliquid l2Book sends whole books")
}

type stream struct {
	*venuekit.Socket
	venuekit.Subscriber
	now func() time.Time
}

// send writes {"method":"subscribe","subscription":{"type":"l2Book","coin":"BTC"}}
// and the same for activeAssetCtx, per coin (the venue takes one per message).
func (s *stream) send(ctx context.Context, method string, coins []string) error {
	for _, coin := range coins {
		for _, typ := range []string{"l2Book", "activeAssetCtx"} {
			if err := s.WriteJSON(ctx, map[string]any{"method": method, "subscription": map[string]string{"type": typ, "coin": coin}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// wsMessage is {"channel":…, "data":…}.
type wsMessage struct {
	Channel string          `json:"channel"`
	Data    json.RawMessage `json:"data"`
}

type activeAssetCtx struct {
	Coin string   `json:"coin"`
	Ctx  AssetCtx `json:"ctx"`
}

func (s *stream) Next(ctx context.Context) (connector.StreamEvent, error) {
	_, data, err := s.Read(ctx)
	if err != nil {
		return connector.StreamEvent{}, err
	}
	var m wsMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return connector.StreamEvent{}, err
	}
	switch m.Channel {
	case "l2Book":
		var b L2Book
		if err := json.Unmarshal(m.Data, &b); err != nil {
			return connector.StreamEvent{}, err
		}
		side := func(ls []L2Level) []contract.Level {
			out := make([]contract.Level, len(ls))
			for i, l := range ls {
				out[i] = contract.Level{dec(l.Px), dec(l.Sz)}
			}
			return out
		}
		return connector.StreamEvent{Market: b.Coin, Book: &connector.BookUpdate{Snapshot: true, Depth: l2Depth,
			Bids: side(b.Levels[0]), Asks: side(b.Levels[1])}}, nil
	case "activeAssetCtx":
		var x activeAssetCtx
		if err := json.Unmarshal(m.Data, &x); err != nil {
			return connector.StreamEvent{}, err
		}
		// Funding is paid hourly, on the hour (as GetFundingRate).
		next := (s.now().Unix()/3600 + 1) * 3600
		return connector.StreamEvent{Market: x.Coin,
			Mark: &connector.MarkUpdate{MarkPrice: nullDec(x.Ctx.MarkPx), IndexPrice: nullDec(x.Ctx.OraclePx)},
			Funding: &connector.FundingUpdate{Rate: nullDec(x.Ctx.Funding), NextFundingTime: next,
				OpenInterest: nullDec(x.Ctx.OpenInterest)}}, nil
	}
	return connector.StreamEvent{}, nil // pong, subscriptionResponse: the socket is alive
}

func nullDec(s string) decimal.NullDecimal {
	if s == "" {
		return decimal.NullDecimal{}
	}
	return decimal.NewNullDecimal(dec(s))
}

// StreamsMarketList implements connector.MarketListStreamer:
// activeAssetCtx carries open interest, and two subscriptions per coin stay
// within the venue's 1000 per IP.
func (a *Adapter) StreamsMarketList() bool { return true }

// MaxStreamMarkets implements connector.StreamCapacity: two subscriptions
// per coin within the venue's 1000 per IP.
func (a *Adapter) MaxStreamMarkets() int { return 500 }
