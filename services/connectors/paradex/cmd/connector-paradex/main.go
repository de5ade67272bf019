// Command connector-paradex serves the Paradex perpetual operations on NATS.
package main

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/paradex"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	connector.Main("connector-paradex", version, paradex.LoadConfig, func(cfg paradex.Config, _ connector.Setup) (connector.Adapter, func(), error) {
		return paradex.NewAdapter(cfg, nil), nil, nil
	})
}
