package aster

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

var _ connector.Streamer = (*Adapter)(nil)

// DialStream implements connector.Streamer. Aster serves every market
// stream on one host in combined mode (/stream, fact sheet §12.1): one
// socket carries mark price and book. Aster pings every 5 min.
func (a *Adapter) DialStream(ctx context.Context, env contract.Environment) (connector.StreamConn, error) {
	return fapi.DialStream(ctx, "Aster", fapi.Route{URL: a.cfg.streamURL(env) + "/stream", Streams: []string{fapi.MarkStream, fapi.DepthStream}})
}

// MaxStreamMarkets implements connector.StreamCapacity: Aster allows 200
// streams per connection (fact sheet §12.1), two per market.
func (a *Adapter) MaxStreamMarkets() int { return 100 }
