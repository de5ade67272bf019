package hyperliquid

import (
	"strings"

	"github.com/perpgate/perpgate/pkg/contract"
)

// reasons maps Hyperliquid's error messages (matched by substring; some
// carry a suffix such as " asset=0") to upstream failure reasons, in the
// order they are tried (fact sheet §9).
var reasons = []struct {
	substring string
	reason    contract.Reason
}{
	{"Insufficient margin", contract.ReasonInsufficientMargin},
	{"Post only order would have immediately matched", contract.ReasonPostOnlyRejected},
	{"Order was never placed, already canceled, or filled", contract.ReasonOrderNotFound},
	{"does not exist", contract.ReasonAuthenticationFailed}, // "User or API Wallet 0x… does not exist."
	{"Must deposit before performing actions", contract.ReasonAuthenticationFailed},
	{"Too many cumulative requests", contract.ReasonUpstreamRateLimited},
	{"nonce", contract.ReasonAuthenticationFailed}, // exact nonce texts are UNCONFIRMED
	{"Price must be divisible by tick size", contract.ReasonInvalidOrder},
	{"minimum value", contract.ReasonInvalidOrder},
	{"invalid size", contract.ReasonInvalidOrder},
	{"zero size", contract.ReasonInvalidOrder},
	{"Reduce only order would increase position", contract.ReasonInvalidOrder},
	{"could not immediately match", contract.ReasonInvalidOrder},
	{"Invalid TP/SL price", contract.ReasonInvalidOrder},
	{"No liquidity available", contract.ReasonInvalidOrder},
	{"away from the reference price", contract.ReasonInvalidOrder},
	{"leverage", contract.ReasonInvalidOrder},
}

// reasonOf classifies a venue message; unknown messages are UNKNOWN.
func reasonOf(msg string) contract.Reason {
	low := strings.ToLower(msg)
	for _, r := range reasons {
		if strings.Contains(low, strings.ToLower(r.substring)) {
			return r.reason
		}
	}
	return contract.ReasonUnknown
}

// venueError turns a Hyperliquid error message (top-level "err" or a
// per-order {"error"}) into EXCHANGE_ERROR with its reason.
func venueError(msg string) *contract.Error {
	e := contract.Upstream(reasonOf(msg), "", msg, "hyperliquid rejected the request: %s", msg)
	if e.Reason == contract.ReasonUpstreamRateLimited {
		e.RetryAfterSeconds = 10 // the address budget refills one request per 10 s
	}
	return e
}

// isNonceError reports a rejection caused by the nonce alone, which left
// the action unexecuted, so signing again with a fresh nonce is safe.
func isNonceError(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "nonce")
}
