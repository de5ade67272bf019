package aster

import (
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// reasons maps Aster error codes (fact sheet §9; the error codes of
// https://github.com/asterdex/api-docs/blob/master/V3(Recommended)/EN/aster-finance-futures-api-v3.md)
// to the upstream failure reasons of DESIGN §4. A code not listed
// falls back on the HTTP status (fapi.FallbackReason).
var reasons = fapi.With(map[int]contract.Reason{
	-1021: contract.ReasonAuthenticationFailed, // nonce ahead of the server's time (after a clock resync)
	-1022: contract.ReasonAuthenticationFailed, // INVALID_SIGNATURE
	-2015: contract.ReasonAuthenticationFailed, // invalid API wallet (signer) for the user, IP or permissions
	-4225: contract.ReasonAuthenticationFailed, // Nonce Expired: stale or repeated nonce (after a retry with a fresh one)
})

// hints say what to do about a reason, after Aster's own message.
var hints = map[contract.Reason]string{
	contract.ReasonAuthenticationFailed: "; check that signerPrivateKey is the key of an API wallet approved (and not expired) for userAddress on Aster's API wallet page, " +
		"that the machine clock is right, and that replicas share Redis for nonces",
	contract.ReasonPermissionDenied:    "; check the API wallet's permissions (perpetual trading) and IP whitelist",
	contract.ReasonInsufficientMargin:  "; reduce the size or add margin",
	contract.ReasonUpstreamUnavailable: "; Aster did not process the request normally: retry shortly (a placement is looked up by its clientOrderId first)",
}

// venueErrors is Aster's table and hints.
var venueErrors = fapi.Errors{Venue: "Aster", Reasons: reasons, Hints: hints}
