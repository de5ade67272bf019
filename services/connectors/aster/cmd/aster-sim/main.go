// Command aster-sim serves a simulated Aster futures V3 REST API and its
// streams (package sim) on the paper engine, as a local stand-in for
// Aster: point PERPGATE_ASTER_URL at it.
//
//	PERPGATE_ASTER_SIM_ADDR    listen address (default 127.0.0.1:8099)
//	PERPGATE_ASTER_SIM_AGENTS  signer:user address pairs, comma separated
//	                           (default: the Aster docs' demonstration pair)
package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/services/connectors/aster/sign"
	"github.com/perpgate/perpgate/services/connectors/aster/sim"
)

// demoAgents is the docs' demonstration API wallet and user (fact sheet §2.3).
const demoAgents = "0x21cF8Ae13Bb72632562c6Fff438652Ba1a151bb0:0x63DD5aCC6b1aa0f563956C0e534DD30B6dcF7C4e"

func main() {
	connector.SimulatorMain("aster simulator", "PERPGATE_ASTER_SIM_ADDR", "127.0.0.1:8099", usage, func(lookup func(string) (string, bool)) (http.Handler, error) {
		agents, err := parseAgents(lookup)
		return sim.New(sim.Config{Agents: agents}), err
	})
}

func parseAgents(lookup func(string) (string, bool)) (map[string]string, error) {
	v, ok := lookup("PERPGATE_ASTER_SIM_AGENTS")
	if !ok || v == "" {
		v = demoAgents
	}
	out := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		signer, user, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok || sign.CheckAddress(signer) != nil || sign.CheckAddress(user) != nil {
			return nil, fmt.Errorf("PERPGATE_ASTER_SIM_AGENTS must be signer:user pairs of 0x addresses separated by commas")
		}
		out[signer] = user
	}
	return out, nil
}

const usage = `usage: aster-sim

A simulated Aster futures V3 REST API on the paper engine; point
PERPGATE_ASTER_URL at it. Settings (environment):
  PERPGATE_ASTER_SIM_ADDR    listen address (default 127.0.0.1:8099)
  PERPGATE_ASTER_SIM_AGENTS  signer:user address pairs, comma separated
                             (default: the Aster docs' demonstration pair)
`
