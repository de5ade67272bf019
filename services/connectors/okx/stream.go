package okx

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// books5Depth is the books5 channel's depth.
const books5Depth = 5

// streamURL is env's public stream, privateURL its private one.
func (c Config) streamURL(env contract.Environment) string {
	return c.socketURL(env, "/ws/v5/public", LiveStreamURL, DemoStreamURL)
}

func (c Config) privateURL(env contract.Environment) string {
	return c.socketURL(env, "/ws/v5/private", LivePrivateURL, DemoPrivateURL)
}

// socketURL is live or demo by env; a REST base that is not OKX's (a
// simulator) serves path on the same host.
func (c Config) socketURL(env contract.Environment, path, live, demo string) string {
	switch base := c.BaseURL(env); {
	case base != DefaultURL:
		return venuekit.WSURL(base) + path
	case env == contract.Testnet:
		return demo
	}
	return live
}

// DialStream implements connector.Streamer: mark-price, index-tickers,
// funding-rate and books5 per swap on one socket.
func (a *Adapter) DialStream(ctx context.Context, env contract.Environment) (connector.StreamConn, error) {
	// The plain text "ping" every 20 s stays inside OKX's 30 s idle limit.
	c, err := venuekit.DialPinged(ctx, "OKX", a.cfg.streamURL(env), []byte("ping"))
	if err != nil {
		return nil, err
	}
	s := &stream{Socket: c, a: a, env: env, insts: map[string]instMeta{}, byIndex: map[string][]string{}}
	s.Subscriber = s.op
	return s, nil
}

// BookSnapshot implements connector.Streamer: books5 sends whole books.
func (a *Adapter) BookSnapshot(context.Context, contract.Environment, string, int) (connector.BookUpdate, error) {
	return connector.BookUpdate{}, contract.Errorf(contract.CodeInternal, "okx books5 sends whole books")
}

type stream struct {
	*venuekit.Socket
	venuekit.Subscriber
	a   *Adapter
	env contract.Environment

	mu      sync.Mutex
	insts   map[string]instMeta // instId → contract value, for book sizes
	byIndex map[string][]string // index (BTC-USDT) → its swaps
}

type wsArg struct {
	Channel string `json:"channel"`
	InstID  string `json:"instId"`
}

// args are a swap's four channels; its index comes from the instrument.
func (s *stream) args(ctx context.Context, markets []string) ([]wsArg, error) {
	cred := connector.Credential{CredentialInfo: contract.CredentialInfo{Environment: s.env}}
	var out []wsArg
	for _, id := range markets {
		im, err := s.a.inst(ctx, cred, id)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		if _, ok := s.insts[id]; !ok {
			s.insts[id] = im
			s.byIndex[im.family] = append(s.byIndex[im.family], id)
		}
		s.mu.Unlock()
		out = append(out, wsArg{"mark-price", id}, wsArg{"index-tickers", im.family}, wsArg{"funding-rate", id}, wsArg{"books5", id})
	}
	return out, nil
}

func (s *stream) op(ctx context.Context, op string, markets []string) error {
	args, err := s.args(ctx, markets)
	if err != nil {
		return err
	}
	return s.WriteJSON(ctx, map[string]any{"op": op, "args": args})
}

// push is {"arg":{"channel","instId"},"data":[…]}; events (subscribe,
// error, notice) have no data.
type push struct {
	Arg  wsArg             `json:"arg"`
	Data []json.RawMessage `json:"data"`
}

type pushData struct {
	InstID      string              `json:"instId"`
	MarkPx      decimal.NullDecimal `json:"markPx"`
	IdxPx       decimal.NullDecimal `json:"idxPx"`
	FundingRate decimal.NullDecimal `json:"fundingRate"`
	FundingTime ms                  `json:"fundingTime"`
	Bids        [][]string          `json:"bids"`
	Asks        [][]string          `json:"asks"`
}

func (s *stream) Next(ctx context.Context) (connector.StreamEvent, error) {
	_, data, err := s.Read(ctx)
	if err != nil {
		return connector.StreamEvent{}, err
	}
	if string(data) == "pong" {
		return connector.StreamEvent{}, nil
	}
	var p push
	if err := json.Unmarshal(data, &p); err != nil {
		return connector.StreamEvent{}, err
	}
	if len(p.Data) == 0 {
		return connector.StreamEvent{}, nil
	}
	var d pushData
	if err := json.Unmarshal(p.Data[0], &d); err != nil {
		return connector.StreamEvent{}, err
	}
	switch p.Arg.Channel {
	case "mark-price":
		return connector.StreamEvent{Market: d.InstID, Mark: &connector.MarkUpdate{MarkPrice: d.MarkPx}}, nil
	case "index-tickers":
		// An index (BTC-USDT) belongs to one linear USDT swap.
		s.mu.Lock()
		swaps := s.byIndex[d.InstID]
		s.mu.Unlock()
		if len(swaps) == 0 {
			return connector.StreamEvent{}, nil
		}
		return connector.StreamEvent{Market: swaps[0], Mark: &connector.MarkUpdate{IndexPrice: d.IdxPx}}, nil
	case "funding-rate":
		return connector.StreamEvent{Market: d.InstID, Funding: &connector.FundingUpdate{Rate: d.FundingRate,
			NextFundingTime: int64(d.FundingTime) / 1000}}, nil
	case "books5":
		s.mu.Lock()
		im := s.insts[d.InstID]
		s.mu.Unlock()
		return connector.StreamEvent{Market: d.InstID, Book: &connector.BookUpdate{Snapshot: true, Depth: books5Depth,
			Bids: levels(d.Bids, im, books5Depth), Asks: levels(d.Asks, im, books5Depth)}}, nil
	}
	return connector.StreamEvent{}, nil
}
