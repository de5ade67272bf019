// Command connector-okx serves the OKX v5 USDT-margined swap operations on
// NATS.
package main

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/okx"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	connector.Main("connector-okx", version, okx.LoadConfig, func(cfg okx.Config, _ connector.Setup) (connector.Adapter, func(), error) {
		return okx.NewAdapter(cfg, nil), nil, nil
	})
}
