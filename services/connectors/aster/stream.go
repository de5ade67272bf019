package aster

import (
	"context"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

var _ connector.Streamer = (*Adapter)(nil)

// Aster serves every market stream on one host in combined mode
// (/stream, fact sheet §12.1): one socket carries mark price and book.
// Aster pings every 5 min and the websocket library answers while Next
// reads.
const (
	markStream  = "@markPrice@1s"
	depthStream = "@depth@100ms"
)

// DialStream implements connector.Streamer.
func (a *Adapter) DialStream(ctx context.Context, env contract.Environment) (connector.StreamConn, error) {
	sock, err := venuekit.Dial(ctx, "Aster", a.cfg.streamURL(env)+"/stream")
	if err != nil {
		return nil, err
	}
	return &stream{sock: sock}, nil
}

// stream is the one market-data socket; Next reads it directly.
type stream struct{ sock *venuekit.Socket }

func (s *stream) Subscribe(ctx context.Context, markets []string) error {
	return s.send(ctx, "SUBSCRIBE", markets)
}

func (s *stream) Unsubscribe(ctx context.Context, markets []string) error {
	return s.send(ctx, "UNSUBSCRIBE", markets)
}

// send writes one live (un)subscription for both streams of each market:
// {"method":"SUBSCRIBE","params":["btcusdt@markPrice@1s",...],"id":1}.
func (s *stream) send(ctx context.Context, method string, markets []string) error {
	names := make([]string, 0, 2*len(markets))
	for _, m := range markets {
		names = append(names, strings.ToLower(m)+markStream, strings.ToLower(m)+depthStream)
	}
	return s.sock.WriteJSON(ctx, map[string]any{"method": method, "params": names, "id": s.sock.NextID()})
}

func (s *stream) Close() error { return s.sock.Close() }

func (s *stream) Next(ctx context.Context) (connector.StreamEvent, error) {
	_, data, err := s.sock.Read(ctx)
	if err != nil {
		return connector.StreamEvent{}, err
	}
	return fapi.StreamEvent(data)
}

// MaxStreamMarkets implements connector.StreamCapacity: Aster allows 200
// streams per connection (fact sheet §12.1), two per market.
func (a *Adapter) MaxStreamMarkets() int { return 100 }
