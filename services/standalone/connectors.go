package standalone

import (
	"path/filepath"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/paper"
	asterconn "github.com/perpgate/perpgate/services/connectors/aster"
	binanceconn "github.com/perpgate/perpgate/services/connectors/binance"
	bybitconn "github.com/perpgate/perpgate/services/connectors/bybit"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	okxconn "github.com/perpgate/perpgate/services/connectors/okx"
	paperconn "github.com/perpgate/perpgate/services/connectors/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
	paradexconn "github.com/perpgate/perpgate/services/connectors/paradex"
	"github.com/redis/go-redis/v9"
)

// adapters builds the adapter of every exchange the standalone gateway
// serves. Real exchanges read their settings (PERPGATE_<EXCHANGE>_URL ...)
// in LoadConfig; each adds one entry here.
// With Redis, Hyperliquid nonces come from a counter shared by every
// gateway on it, as replicas of one agent need (fact sheet §4.4).
func (g *Gateway) adapters(rdb *redis.Client) ([]connector.Adapter, error) {
	// The paper venue runs in process, served through its HTTP handler
	// without a socket; the adapter speaks its HTTP API like any other,
	// and reads its market stream from the engine.
	// Paper state survives restarts: every change is journaled in the data
	// dir and replayed at start.
	journal, records, err := paper.OpenFileJournal(filepath.Join(g.cfg.DataDir, "paper.journal"))
	if err != nil {
		return nil, err
	}
	g.onClose(journal.Close)
	g.journal = journal
	if g.paper, err = paper.Reopen(paper.Config{Seed: g.cfg.PaperSeed, Now: g.cfg.PaperNow, Log: g.log}, journal, records); err != nil {
		return nil, err
	}
	client := venue.NewClient("http://paper-venue.internal", venue.InProcessClient(venue.NewHandler(g.paper)))
	var hlOpts []hyperliquid.Option
	if rdb != nil {
		hlOpts = append(hlOpts, hyperliquid.WithNonces(hyperliquid.NewRedisNonces(rdb, g.cfg.Edge.SubjectPrefix+":hl:nonce:", nil)))
	}
	// Paradex JWTs are per credential: with Redis every gateway on it
	// reuses one.
	paradexCfg := g.cfg.Paradex
	if rdb != nil {
		paradexCfg.Tokens = paradexconn.NewRedisTokens(rdb, g.cfg.Edge.SubjectPrefix+":paradex:jwt:")
	}
	// Aster nonces, too, come from one counter per API wallet shared by
	// every gateway on Redis (fact sheet §0 #3).
	asterCfg := g.cfg.Aster
	if rdb != nil {
		asterCfg.Nonces = asterconn.NewRedisNonces(rdb, g.cfg.Edge.SubjectPrefix+":aster:nonce:")
	}
	return []connector.Adapter{
		// The venue records claims with its orders (the journal), and its
		// orders are seen outside the process only once that is durable.
		paperconn.NewAdapter(client).StreamFromEngine(g.paper).CarryClaims(),
		hyperliquid.NewAdapter(g.cfg.Hyperliquid, connector.NewHTTPClient(g.cfg.Hyperliquid.Timeout), hlOpts...),
		binanceconn.NewAdapter(g.cfg.Binance, nil),
		bybitconn.NewAdapter(g.cfg.Bybit, nil),
		okxconn.NewAdapter(g.cfg.OKX, nil),
		paradexconn.NewAdapter(paradexCfg, nil),
		asterconn.NewAdapter(asterCfg, nil),
	}, nil
}
