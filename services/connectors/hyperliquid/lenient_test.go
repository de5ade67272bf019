package hyperliquid

import (
	"encoding/json"
	"testing"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
)

// TestNumbersAsStringsOrNumbers: a userFills entry reads the same whether
// its oid, tid and time come as numbers (Hyperliquid's documented form,
// https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/info-endpoint)
// or strings.
func TestNumbersAsStringsOrNumbers(t *testing.T) {
	connectortest.SameFill(t, func(b []byte) (contract.Fill, error) {
		var f UserFill
		err := json.Unmarshal(b, &f)
		return fillFromWire(f), err
	},
		`{"coin":"BTC","px":"95000.5","sz":"0.01","side":"B","time":"1735689600000","oid":"90542681","tid":"118906512037719","fee":"0.012896","feeToken":"USDC"}`,
		`{"coin":"BTC","px":"95000.5","sz":"0.01","side":"B","time":1735689600000,"oid":90542681,"tid":118906512037719,"fee":"0.012896","feeToken":"USDC"}`)
}
