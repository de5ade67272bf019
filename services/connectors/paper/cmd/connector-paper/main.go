// Command connector-paper serves the paper exchange's operations on NATS,
// as a stateless adapter to the paper venue.
package main

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	connector.Main("connector-paper", version, paper.LoadConfig, func(cfg paper.Config, _ connector.Setup) (connector.Adapter, func(), error) {
		return paper.NewAdapter(venue.NewClient(cfg.VenueURL, connector.NewHTTPClient(cfg.Timeout))), nil, nil
	})
}
