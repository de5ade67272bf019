// Command bybit-sim serves a simulated Bybit v5 REST API for USDT
// perpetuals (package sim) on the paper engine, as a local stand-in for
// Bybit: point PERPGATE_BYBIT_URL at it.
//
//	PERPGATE_BYBIT_SIM_ADDR  listen address (default 127.0.0.1:8096)
//	PERPGATE_BYBIT_SIM_KEYS  apiKey:apiSecret pairs, comma separated
//	                         (default sim-api-key:sim-api-secret)
package main

import (
	"net/http"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/bybit/sim"
)

func main() {
	connector.SimulatorMain("bybit simulator", "PERPGATE_BYBIT_SIM_ADDR", "127.0.0.1:8096", usage, func(lookup func(string) (string, bool)) (http.Handler, error) {
		keys, err := connector.SimKeys(lookup, "PERPGATE_BYBIT_SIM_KEYS")
		return sim.New(sim.Config{Keys: keys}), err
	})
}

const usage = `usage: bybit-sim

A simulated Bybit v5 REST API for USDT perpetuals on the paper engine; point
PERPGATE_BYBIT_URL at it. Settings (environment):
  PERPGATE_BYBIT_SIM_ADDR  listen address (default 127.0.0.1:8096)
  PERPGATE_BYBIT_SIM_KEYS  apiKey:apiSecret pairs, comma separated
                           (default sim-api-key:sim-api-secret)
`
