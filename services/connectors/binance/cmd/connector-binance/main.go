// Command connector-binance serves the Binance USDⓈ-M Futures operations on
// NATS.
package main

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/binance"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	connector.Main("connector-binance", version, binance.LoadConfig, func(cfg binance.Config, _ connector.Setup) (connector.Adapter, func(), error) {
		return binance.NewAdapter(cfg, nil), nil, nil
	})
}
