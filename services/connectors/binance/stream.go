package binance

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

var _ connector.Streamer = (*Adapter)(nil)

// Binance splits its market streams by class (fact sheet §12): mark price
// on /market, books on /public, never mixed on one connection. A stream
// is therefore two sockets in combined mode; Binance pings every 3 min
// and the websocket library answers while Next reads.
const (
	markStream  = "@markPrice@1s"
	depthStream = "@depth@100ms"
)

// DialStream implements connector.Streamer.
func (a *Adapter) DialStream(ctx context.Context, env contract.Environment) (connector.StreamConn, error) {
	base := a.cfg.streamURL(env)
	s := &stream{frames: make(chan frame, 512), done: make(chan struct{})}
	for _, route := range []string{"/market/stream", "/public/stream"} {
		c, err := venuekit.Dial(ctx, "Binance", base+route)
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
	socks  []*venuekit.Socket // /market, /public
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
// {"method":"SUBSCRIBE","params":["btcusdt@markPrice@1s"],"id":1}.
func (s *stream) send(ctx context.Context, method string, markets []string) error {
	for i, suffix := range []string{markStream, depthStream} {
		names := make([]string, len(markets))
		for j, m := range markets {
			names[j] = strings.ToLower(m) + suffix
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
		return fapi.StreamEvent(f.data)
	case <-s.done:
		return connector.StreamEvent{}, errors.New("binance stream closed")
	case <-ctx.Done():
		return connector.StreamEvent{}, ctx.Err()
	}
}

// MaxStreamMarkets implements connector.StreamCapacity: Binance allows 200
// streams per connection (fact sheet §12), one per market on each socket.
func (a *Adapter) MaxStreamMarkets() int { return 200 }
