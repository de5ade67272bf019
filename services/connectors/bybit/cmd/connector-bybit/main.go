// Command connector-bybit serves the Bybit v5 USDT perpetual operations on
// NATS.
package main

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/bybit"
)

// version is stamped at build time (-X main.version=...).
var version = "dev"

func main() {
	connector.Main("connector-bybit", version, bybit.LoadConfig, func(cfg bybit.Config, _ connector.Setup) (connector.Adapter, func(), error) {
		return bybit.NewAdapter(cfg, nil), nil, nil
	})
}
