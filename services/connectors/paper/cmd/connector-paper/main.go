// Command connector-paper serves the paper exchange's operations on NATS,
// as a stateless adapter to the paper venue, and follows the venue's
// private streams for the account events.
package main

import (
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	connector.Main("connector-paper", version, paper.LoadConfig, func(cfg paper.Config, s connector.Setup) (connector.Adapter, func(), error) {
		a := paper.NewAdapter(venue.NewClient(cfg.VenueURL, connector.NewHTTPClient(cfg.Timeout)))
		if cfg.UnlinkedProtection {
			a.UnlinkProtection()
		}
		// Its own connection: the venue's frames never queue behind requests.
		nc, err := bus.Connect(s.Service.NATSURL, "connector-paper-feed", s.Service.NATSAuth, s.Log)
		if err != nil {
			return nil, nil, err
		}
		return paper.NewFeeder(a, nc, contract.NewSubjects(s.Service.SubjectPrefix)), nc.Close, nil
	})
}
