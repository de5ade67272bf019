// Command binance-sim serves a simulated Binance USDⓈ-M Futures REST API
// (package sim) on the paper engine, as a local stand-in for Binance:
// point PERPGATE_BINANCE_URL at it.
//
//	PERPGATE_BINANCE_SIM_ADDR  listen address (default 127.0.0.1:8095)
//	PERPGATE_BINANCE_SIM_KEYS  apiKey:apiSecret pairs, comma separated
//	                           (default sim-api-key:sim-api-secret)
package main

import (
	"net/http"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
)

func main() {
	connector.SimulatorMain("binance simulator", "PERPGATE_BINANCE_SIM_ADDR", "127.0.0.1:8095", usage, func(lookup func(string) (string, bool)) (http.Handler, error) {
		keys, err := connector.SimKeys(lookup, "PERPGATE_BINANCE_SIM_KEYS")
		return sim.New(sim.Config{Keys: keys}), err
	})
}

const usage = `usage: binance-sim

A simulated Binance USDⓈ-M Futures REST API on the paper engine; point
PERPGATE_BINANCE_URL at it. Settings (environment):
  PERPGATE_BINANCE_SIM_ADDR  listen address (default 127.0.0.1:8095)
  PERPGATE_BINANCE_SIM_KEYS  apiKey:apiSecret pairs, comma separated
                             (default sim-api-key:sim-api-secret)
`
