package standalone

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/paper"
	binanceconn "github.com/perpgate/perpgate/services/connectors/binance"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	paperconn "github.com/perpgate/perpgate/services/connectors/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// adapters builds the adapter of every exchange the standalone gateway
// serves. Real exchanges read their settings (PERPGATE_<EXCHANGE>_URL ...)
// in LoadConfig; each adds one entry here.
func (g *Gateway) adapters() ([]connector.Adapter, error) {
	// The paper venue runs in process, served through its HTTP handler
	// without a socket; the adapter speaks its HTTP API like any other.
	g.paper = paper.New(paper.Config{Seed: g.cfg.PaperSeed})
	client := venue.NewClient("http://paper-venue.internal", venue.InProcessClient(venue.NewHandler(g.paper)))
	return []connector.Adapter{
		paperconn.NewAdapter(client),
		hyperliquid.NewAdapter(g.cfg.Hyperliquid, connector.NewHTTPClient(g.cfg.Hyperliquid.Timeout)),
		binanceconn.NewAdapter(g.cfg.Binance, nil),
	}, nil
}
