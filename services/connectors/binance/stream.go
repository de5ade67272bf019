package binance

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

var _ connector.Streamer = (*Adapter)(nil)

// DialStream implements connector.Streamer. Binance splits its market
// streams by class (fact sheet §12): mark price on /market, books on
// /public, never mixed on one connection, so a stream is two sockets.
func (a *Adapter) DialStream(ctx context.Context, env contract.Environment) (connector.StreamConn, error) {
	base := a.cfg.StreamURL(env)
	return fapi.DialStream(ctx, "Binance", fapi.Route{URL: base + "/market/stream", Streams: []string{fapi.MarkStream}},
		fapi.Route{URL: base + "/public/stream", Streams: []string{fapi.DepthStream}})
}

// MaxStreamMarkets implements connector.StreamCapacity: Binance allows 200
// streams per connection (fact sheet §12), one per market on each socket.
func (a *Adapter) MaxStreamMarkets() int { return 200 }
