package binance

import (
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// reasons maps Binance error codes (fact sheet §9; Binance's error-code
// page) to the upstream failure reasons of DESIGN §4. A code not listed
// falls back on the HTTP status (fapi.FallbackReason).
var reasons = fapi.With(map[int]contract.Reason{
	-1021: contract.ReasonAuthenticationFailed, // INVALID_TIMESTAMP (after a clock resync)
	-1022: contract.ReasonAuthenticationFailed, // INVALID_SIGNATURE: wrong apiSecret
	-2015: contract.ReasonAuthenticationFailed, // REJECTED_MBX_KEY: invalid key, IP or permissions
	-4120: contract.ReasonInvalidOrder,         // conditional type on the regular order endpoint
	-4202: contract.ReasonPermissionDenied,     // leverage above 20x needs account age or KYC
	-4203: contract.ReasonPermissionDenied,     // leverage above 20x not allowed for this account
	-4205: contract.ReasonPermissionDenied,     // leverage above 20x within 30 days of opening
	-4206: contract.ReasonPermissionDenied,     // leverage restricted for the region
	-4403: contract.ReasonPermissionDenied,     // leverage limited by compliance
	-5028: contract.ReasonAuthenticationFailed, // timestamp outside the matching engine's recvWindow
})

// hints say what to do about a reason, after Binance's own message.
var hints = map[contract.Reason]string{
	contract.ReasonAuthenticationFailed: "; check the credential's apiKey and apiSecret (and the machine clock)",
	contract.ReasonPermissionDenied:     "; check the API key's permissions (futures trading) and IP whitelist",
	contract.ReasonInsufficientMargin:   "; reduce the size or add margin",
	contract.ReasonUpstreamUnavailable:  "; Binance did not process the request normally: retry shortly (a placement is looked up by its clientOrderId first)",
}

// venueErrors is Binance's table and hints.
var venueErrors = fapi.Errors{Venue: "Binance", Reasons: reasons, Hints: hints}

// upstreamError turns an error answer of Binance's into the contract error.
func upstreamError(status, code int, msg string) *contract.Error {
	return venueErrors.Upstream(status, code, msg)
}
