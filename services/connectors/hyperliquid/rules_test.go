package hyperliquid_test

import (
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
)

// TestStopDirection runs DESIGN §13's stop table against the simulator.
// Hyperliquid fires a trigger order on the mark price in the direction its
// tpsl and side give (an "sl" buy as the mark rises to triggerPx, a "tp"
// buy as it falls; frontendOpenOrders shows "Price above"/"Price below":
// https://hyperliquid.gitbook.io/hyperliquid-docs/trading/take-profit-and-stop-loss-orders-tp-sl),
// so the connector picks tpsl from the trigger's side of the mark.
func TestStopDirection(t *testing.T) {
	still := time.Now()
	s, url := simVenue(t, sim.Config{Now: func() time.Time { return still }})
	a := hyperliquid.NewAdapter(hyperliquid.Config{URL: url}, nil)
	r := connectortest.ServeREST(t, a, contract.Testnet, credential("a", accountA, agentKeyA).Secret)
	connectortest.RunStopDirection(t, connectortest.OnEngine(r, s.Engine(), "BTC", "BTC", "60000"))
}
