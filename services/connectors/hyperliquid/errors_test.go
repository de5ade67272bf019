package hyperliquid

import (
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

func TestReasonOf(t *testing.T) {
	tests := []struct {
		name, msg string
		want      contract.Reason
	}{
		{"margin", "Insufficient margin to place order. asset=0", contract.ReasonInsufficientMargin},
		{"post only", "Post only order would have immediately matched, bbo was 60000@60001. asset=0", contract.ReasonPostOnlyRejected},
		{"not found", "Order was never placed, already canceled, or filled.", contract.ReasonOrderNotFound},
		{"unknown signer", "User or API Wallet 0x0123 does not exist.", contract.ReasonAuthenticationFailed},
		{"no deposit", "Must deposit before performing actions. User: 0x0123", contract.ReasonAuthenticationFailed},
		{"address budget", "Too many cumulative requests sent (10001 > 10000) for cumulative volume traded $0.", contract.ReasonUpstreamRateLimited},
		{"tick", "Price must be divisible by tick size. asset=0", contract.ReasonInvalidOrder},
		{"min value", "Order must have minimum value of $10. asset=0", contract.ReasonInvalidOrder},
		{"ioc", "Order could not immediately match against any resting orders. asset=0", contract.ReasonInvalidOrder},
		{"reduce only", "Reduce only order would increase position. asset=3", contract.ReasonInvalidOrder},
		{"tpsl", "Invalid TP/SL price. asset=0", contract.ReasonInvalidOrder},
		{"other", "Something new", contract.ReasonUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := reasonOf(tc.msg); got != tc.want {
				t.Fatalf("reasonOf(%q) = %s, want %s", tc.msg, got, tc.want)
			}
			e := venueError(tc.msg)
			if e.Code != contract.CodeExchangeError || e.ExchangeMessage != tc.msg || e.Status() != 502 {
				t.Fatalf("venueError: %+v", e)
			}
		})
	}
}
