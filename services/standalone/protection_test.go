package standalone

import (
	"fmt"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	"github.com/shopspring/decimal"
)

// protectionVenue is what the orphan-leg scenario needs of one venue.
type protectionVenue struct {
	do     func(body map[string]any) map[string]any
	engine *paper.Engine // the venue's engine, to move the mark
	symbol string        // the engine's symbol
	market string        // as the client names it
	size   string
}

// orphanScenario (issue 10, case 9): a protection pair never outlives its
// position. The take-profit fires: the stop-loss goes. The position is
// closed by hand: both legs go. Native on paper and Hyperliquid, by the
// connector's watcher on Binance.
func orphanScenario(t *testing.T, v protectionVenue) {
	t.Helper()
	open := func() map[string]any {
		v.do(map[string]any{"operation": "placeMarketOrder", "market": v.market, "side": "BUY", "size": v.size})
		mark, err := v.engine.MarkPrice(v.symbol)
		if err != nil {
			t.Fatal(err)
		}
		return v.do(map[string]any{"operation": "placeProtectionOrders", "market": v.market, "side": "LONG", "size": v.size,
			"entryPrice": mark.Mark.String(), "tpPercent": 2, "slPercent": 30})
	}
	gone := func(what string, ids ...any) {
		t.Helper()
		// Checked every 250 ms, not as fast as Poll would: the key's rate limit.
		deadline := time.Now().Add(10 * time.Second)
		for {
			var still error
			for _, o := range objects(t, v.do(map[string]any{"operation": "getOrders", "market": v.market})["orders"]) {
				for _, id := range ids {
					if o["id"] == id {
						still = fmt.Errorf("order %v still %v", id, o["status"])
					}
				}
			}
			if still == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10s: %v", what, still)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}

	prot := open()
	mark, _ := v.engine.MarkPrice(v.symbol)
	if _, err := v.engine.SetMarkPrice(v.symbol, mark.Mark.Mul(decimal.RequireFromString("1.05"))); err != nil {
		t.Fatal(err)
	}
	if ps := objects(t, v.do(map[string]any{"operation": "getPositions", "market": v.market})["positions"]); len(ps) != 0 {
		t.Fatalf("the take-profit did not close the position: %v", ps)
	}
	gone("the stop-loss after its take-profit fired", prot["slOrderId"])

	prot = open()
	v.do(map[string]any{"operation": "closeAllPositions", "market": v.market})
	gone("both legs after the position was closed by hand", prot["tpOrderId"], prot["slOrderId"])
}

func TestProtectionPairNeverOutlivesPositionPaper(t *testing.T) {
	t.Parallel() // each on its own gateway; most of the time is waiting for the watcher
	g := startGateway(t)
	orphanScenario(t, protectionVenue{do: g.ok, engine: g.PaperEngine(), symbol: "BTC-USD-PERP", market: "BTC", size: "0.01"})
}

func TestProtectionPairNeverOutlivesPositionHyperliquid(t *testing.T) {
	t.Parallel() // each on its own gateway; most of the time is waiting for the watcher
	e := startHyperliquid(t)
	orphanScenario(t, protectionVenue{do: e.do, engine: e.sim.Engine(), symbol: "BTC", market: "BTC", size: "0.01"})
}

func TestProtectionPairNeverOutlivesPositionBinance(t *testing.T) {
	t.Parallel() // each on its own gateway; most of the time is waiting for the watcher
	b := startBinance(t, sim.Config{})
	orphanScenario(t, protectionVenue{do: b.ok, engine: b.sim.Engine(), symbol: "BTCUSDT", market: "BTC", size: "0.01"})
}

func TestProtectionPairNeverOutlivesPositionBybit(t *testing.T) {
	t.Parallel() // each on its own gateway; most of the time is waiting for the watcher
	b := startBybit(t, bybitsim.Config{}, nil)
	orphanScenario(t, protectionVenue{do: b.ok, engine: b.sim.Engine(), symbol: "BTCUSDT", market: "BTC", size: "0.01"})
}
