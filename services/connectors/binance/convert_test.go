package binance

import (
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// TestAlgoStatusFromWire covers every algoStatus of Binance's ALGO_UPDATE
// model (official SDK): NEW, CANCELED, TRIGGERING, TRIGGERED, FINISHED,
// REJECTED, EXPIRED.
func TestAlgoStatusFromWire(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"waiting for the trigger", "NEW", contract.StatusPending},
		{"fired, on its way to the engine", "TRIGGERING", contract.StatusOpen},
		{"fired, in the engine", "TRIGGERED", contract.StatusOpen},
		{"done", "FINISHED", contract.StatusFilled},
		{"cancelled", "CANCELED", contract.StatusCancelled},
		{"cancelled by the system", "EXPIRED", contract.StatusCancelled},
		{"refused by the engine", "REJECTED", contract.StatusRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := algoStatusFromWire(tt.in); got != tt.want {
				t.Errorf("algoStatusFromWire(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseOrderID(t *testing.T) {
	tests := []struct {
		name, id string
		n        int64
		algo     bool
		ok       bool
	}{
		{"regular", "4061340001", 4061340001, false, true},
		{"algo", "algo-7000000001", 7000000001, true, true},
		{"empty", "", 0, false, false},
		{"not digits", "abc", 0, false, false},
		{"algo without digits", "algo-", 0, false, false},
		{"negative", "-5", 0, false, false},
		{"zero", "0", 0, false, false},
		{"other prefix", "tp-12", 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, algo, err := parseOrderID(tt.id)
			if (err == nil) != tt.ok || n != tt.n || algo != tt.algo {
				t.Fatalf("parseOrderID(%q) = %d, %v, %v", tt.id, n, algo, err)
			}
			if err != nil {
				ce, _ := contract.AsError(err)
				if ce.Code != contract.CodeInvalidRequest || !strings.Contains(ce.Message, `"orderId"`) {
					t.Errorf("error %v does not name orderId", err)
				}
			}
		})
	}
}
