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

// TestBuilderFeeCountedOnce: a recorded fill with fee 0.012896 beside
// builderFee 0.002424 (issue 28). Hyperliquid's WsFill says builderFee is
// "amount paid to builder, also included in fee"
// (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions;
// the Python SDK's types say the same), so the user paid 0.012896 in full,
// not their sum as ccxt reports.
func TestBuilderFeeCountedOnce(t *testing.T) {
	var f UserFill
	rec := `{"coin":"BTC","px":"107234.0","sz":"0.00022","side":"B","time":1751882633471,"startPosition":"0.0","dir":"Open Long",` +
		`"closedPnl":"0.0","hash":"0x0","oid":110362813471,"crossed":true,"fee":"0.012896","tid":905287460232542,"feeToken":"USDC","builderFee":"0.002424"}`
	if err := json.Unmarshal([]byte(rec), &f); err != nil {
		t.Fatal(err)
	}
	if got := fillFromWire(f).Fee.String(); got != "0.012896" {
		t.Fatalf("fee %s, want 0.012896 (builderFee is inside fee)", got)
	}
}

// TestOrderStatusReasons: orderStatus's documented statuses map as their
// names say; one not on the list ended the order unexplained, so with
// nothing filled it is a rejection (issue 28), never CANCELLED or UNKNOWN.
func TestOrderStatusReasons(t *testing.T) {
	for _, tt := range []struct {
		status string
		filled bool
		want   string
	}{
		{"open", false, contract.StatusOpen},
		{"filled", true, contract.StatusFilled},
		{"marginCanceled", false, contract.StatusCancelled},
		{"scheduledCancel", false, contract.StatusCancelled},
		{"minTradeNtlRejected", false, contract.StatusRejected},
		{"perpMarginRejected", false, contract.StatusRejected},
		{"someNewStatus", false, contract.StatusRejected},
		{"someNewStatus", true, contract.StatusCancelled},
	} {
		if got := statusFromOrderStatus(tt.status, contract.StatusOpen, tt.filled); got != tt.want {
			t.Errorf("%s (filled %v): %s, want %s", tt.status, tt.filled, got, tt.want)
		}
	}
}
