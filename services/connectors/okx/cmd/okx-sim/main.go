// Command okx-sim serves a simulated OKX v5 REST API for USDT-margined
// swaps (package sim) on the paper engine, as a local stand-in for OKX:
// point PERPGATE_OKX_URL at it.
//
//	PERPGATE_OKX_SIM_ADDR  listen address (default 127.0.0.1:8097)
//	PERPGATE_OKX_SIM_KEYS  apiKey:apiSecret:passphrase[:demo] entries, comma
//	                       separated; :demo marks a demo-trading key
//	                       (default sim-api-key:sim-api-secret:sim-passphrase
//	                       and sim-demo-key:sim-demo-secret:sim-passphrase:demo)
package main

import (
	"errors"
	"net/http"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/okx/sim"
)

const defaultKeys = "sim-api-key:sim-api-secret:sim-passphrase,sim-demo-key:sim-demo-secret:sim-passphrase:demo"

func main() {
	connector.SimulatorMain("okx simulator", "PERPGATE_OKX_SIM_ADDR", "127.0.0.1:8097", usage, func(lookup func(string) (string, bool)) (http.Handler, error) {
		raw, ok := lookup("PERPGATE_OKX_SIM_KEYS")
		if !ok || raw == "" {
			raw = defaultKeys
		}
		keys := map[string]sim.Key{}
		for _, entry := range strings.Split(raw, ",") {
			f := strings.Split(strings.TrimSpace(entry), ":")
			if len(f) < 3 || len(f) > 4 || f[0] == "" || f[1] == "" || f[2] == "" || (len(f) == 4 && f[3] != "demo") {
				return nil, errors.New("PERPGATE_OKX_SIM_KEYS must be apiKey:apiSecret:passphrase[:demo] entries separated by commas")
			}
			keys[f[0]] = sim.Key{Secret: f[1], Passphrase: f[2], Demo: len(f) == 4}
		}
		return sim.New(sim.Config{Keys: keys}), nil
	})
}

const usage = `usage: okx-sim

A simulated OKX v5 REST API for USDT-margined swaps on the paper engine; point
PERPGATE_OKX_URL at it. Settings (environment):
  PERPGATE_OKX_SIM_ADDR  listen address (default 127.0.0.1:8097)
  PERPGATE_OKX_SIM_KEYS  apiKey:apiSecret:passphrase[:demo] entries, comma
                         separated; :demo marks a demo-trading key (default
                         sim-api-key:sim-api-secret:sim-passphrase and
                         sim-demo-key:sim-demo-secret:sim-passphrase:demo)
`
