package binance

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
)

// TestStopDirection runs DESIGN §13's stop table against the simulator,
// which answers a conditional order already through its trigger as Binance
// does: -2021 "Order would immediately trigger." (a BUY STOP_MARKET needs
// its stopPrice above the mark, a BUY TAKE_PROFIT_MARKET below it:
// https://developers.binance.com/docs/derivatives/usds-margined-futures/trade/rest-api/New-Algo-Order,
// https://developers.binance.com/docs/derivatives/usds-margined-futures/error-code).
func TestStopDirection(t *testing.T) {
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }}, nil)
	r := connectortest.ServeREST(t, f.a, contract.Mainnet, f.cred.Secret)
	connectortest.RunStopDirection(t, connectortest.OnEngine(r, f.sim.Engine(), "BTC-USDT-PERP", "BTCUSDT", "95000"))
}

// TestNumbersAsStringsOrNumbers: Binance-style APIs document the same ids
// and times as numbers in one answer and strings in another (Aster's
// futures API docs, e.g. orderId "orderId": 22542179 beside "22542179");
// a trade reads the same either way.
func TestNumbersAsStringsOrNumbers(t *testing.T) {
	connectortest.SameFill(t, func(b []byte) (contract.Fill, error) {
		var u fapi.UserTrade
		err := json.Unmarshal(b, &u)
		return fillFromWire(u), err
	},
		`{"id":"698759","orderId":"25851813","symbol":"BTCUSDT","side":"BUY","price":"7819.01","qty":"0.002","commission":"0.00312760","time":"1569514978020"}`,
		`{"id":698759,"orderId":25851813,"symbol":"BTCUSDT","side":"BUY","price":7819.01,"qty":0.002,"commission":0.00312760,"time":1569514978020}`)
}
