// Command paradex-sim serves a simulated Paradex REST v1 API (package sim)
// on the paper engine, as a local stand-in for Paradex: point
// PERPGATE_PARADEX_URL at http://<addr>/v1.
//
//	PERPGATE_PARADEX_SIM_ADDR      listen address (default 127.0.0.1:8098)
//	PERPGATE_PARADEX_SIM_ACCOUNTS  accountAddress:starkPublicKey pairs, comma
//	                               separated (0x hex; default none)
//	PERPGATE_PARADEX_SIM_CHAIN     starknet_chain_id (default PRIVATE_SN_PARACLEAR_MAINNET)
package main

import (
	"errors"
	"net/http"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
)

func main() {
	connector.SimulatorMain("paradex simulator", "PERPGATE_PARADEX_SIM_ADDR", "127.0.0.1:8098", usage, func(lookup func(string) (string, bool)) (http.Handler, error) {
		var cfg sim.Config
		if v, ok := lookup("PERPGATE_PARADEX_SIM_CHAIN"); ok && v != "" {
			cfg.ChainID = v
		}
		s := sim.New(cfg)
		if v, ok := lookup("PERPGATE_PARADEX_SIM_ACCOUNTS"); ok && v != "" {
			for _, pair := range strings.Split(v, ",") {
				addr, pub, ok := strings.Cut(strings.TrimSpace(pair), ":")
				if !ok || addr == "" || pub == "" {
					return nil, errors.New("PERPGATE_PARADEX_SIM_ACCOUNTS must be accountAddress:starkPublicKey pairs separated by commas")
				}
				if err := s.AddAccount(addr, pub); err != nil {
					return nil, errors.New("PERPGATE_PARADEX_SIM_ACCOUNTS: " + err.Error())
				}
			}
		}
		return s, nil
	})
}

const usage = `usage: paradex-sim

A simulated Paradex REST v1 API on the paper engine; point PERPGATE_PARADEX_URL
at http://<addr>/v1. Settings (environment):
  PERPGATE_PARADEX_SIM_ADDR      listen address (default 127.0.0.1:8098)
  PERPGATE_PARADEX_SIM_ACCOUNTS  accountAddress:starkPublicKey pairs, comma
                                 separated (0x hex; default none)
  PERPGATE_PARADEX_SIM_CHAIN     starknet_chain_id (default PRIVATE_SN_PARACLEAR_MAINNET)
`
