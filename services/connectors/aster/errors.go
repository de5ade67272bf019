package aster

import (
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// reasons maps Aster error codes (fact sheet §9; the error codes of
// https://github.com/asterdex/api-docs/blob/master/V3(Recommended)/EN/aster-finance-futures-api-v3.md)
// to the upstream failure reasons of DESIGN §4. A code not listed
// falls back on the HTTP status (fallbackReason).
var reasons = map[int]contract.Reason{
	-1000: contract.ReasonUnknown,              // UNKNOWN
	-1001: contract.ReasonUpstreamUnavailable,  // DISCONNECTED: internal error
	-1002: contract.ReasonPermissionDenied,     // UNAUTHORIZED
	-1003: contract.ReasonUpstreamRateLimited,  // TOO_MANY_REQUESTS
	-1007: contract.ReasonUpstreamUnavailable,  // TIMEOUT waiting for the backend; state unknown
	-1008: contract.ReasonUpstreamUnavailable,  // SERVER_BUSY
	-1011: contract.ReasonPermissionDenied,     // NON_WHITE_LIST: IP not whitelisted
	-1015: contract.ReasonUpstreamRateLimited,  // TOO_MANY_ORDERS
	-1016: contract.ReasonUpstreamUnavailable,  // SERVICE_SHUTTING_DOWN
	-1021: contract.ReasonAuthenticationFailed, // nonce ahead of the server's time (after a clock resync)
	-1022: contract.ReasonAuthenticationFailed, // INVALID_SIGNATURE
	-1102: contract.ReasonInvalidOrder,         // MANDATORY_PARAM_EMPTY_OR_MALFORMED
	-1111: contract.ReasonInvalidOrder,         // BAD_PRECISION
	-1116: contract.ReasonInvalidOrder,         // INVALID_ORDER_TYPE
	-1121: contract.ReasonInvalidOrder,         // BAD_SYMBOL
	-2010: contract.ReasonInvalidOrder,         // NEW_ORDER_REJECTED
	-2011: contract.ReasonOrderNotFound,        // CANCEL_REJECTED: unknown order sent
	-2013: contract.ReasonOrderNotFound,        // NO_SUCH_ORDER
	-2014: contract.ReasonAuthenticationFailed, // BAD_API_KEY_FMT
	-2015: contract.ReasonAuthenticationFailed, // invalid API wallet (signer) for the user, IP or permissions
	-2018: contract.ReasonInsufficientMargin,   // BALANCE_NOT_SUFFICIENT
	-2019: contract.ReasonInsufficientMargin,   // MARGIN_NOT_SUFFICIEN
	-2021: contract.ReasonInvalidOrder,         // ORDER_WOULD_IMMEDIATELY_TRIGGER
	-2022: contract.ReasonInvalidOrder,         // REDUCE_ONLY_REJECT
	-2027: contract.ReasonInsufficientMargin,   // MAX_LEVERAGE_RATIO: position too large for the leverage
	-2028: contract.ReasonInsufficientMargin,   // MIN_LEVERAGE_RATIO: leverage too small for the position
	-4003: contract.ReasonInvalidOrder,         // QTY_LESS_THAN_ZERO
	-4004: contract.ReasonInvalidOrder,         // QTY_LESS_THAN_MIN_QTY
	-4005: contract.ReasonInvalidOrder,         // QTY_GREATER_THAN_MAX_QTY
	-4013: contract.ReasonInvalidOrder,         // PRICE_LESS_THAN_MIN_PRICE
	-4014: contract.ReasonInvalidOrder,         // PRICE_NOT_INCREASED_BY_TICK_SIZE
	-4015: contract.ReasonInvalidOrder,         // INVALID_CL_ORD_ID_LEN
	-4016: contract.ReasonInvalidOrder,         // PRICE_HIGHTER_THAN_MULTIPLIER_UP
	-4023: contract.ReasonInvalidOrder,         // QTY_NOT_INCREASED_BY_STEP_SIZE
	-4024: contract.ReasonInvalidOrder,         // PRICE_LOWER_THAN_MULTIPLIER_DOWN
	-4028: contract.ReasonInvalidOrder,         // INVALID_LEVERAGE
	-4046: contract.ReasonInvalidOrder,         // NO_NEED_TO_CHANGE_MARGIN_TYPE (setLeverage treats it as done)
	-4047: contract.ReasonInvalidOrder,         // margin type cannot change with open orders
	-4048: contract.ReasonInvalidOrder,         // margin type cannot change with a position
	-4061: contract.ReasonInvalidOrder,         // position side does not match the account's mode
	-4082: contract.ReasonInvalidOrder,         // INVALID_BATCH_PLACE_ORDER_SIZE
	-4116: contract.ReasonInvalidOrder,         // DUPLICATED_CLIENT_ORDER_ID
	-4118: contract.ReasonInvalidOrder,         // REDUCE_ONLY_MARGIN_CHECK_FAILED
	-4142: contract.ReasonInvalidOrder,         // stop would trigger immediately
	-4164: contract.ReasonInvalidOrder,         // MIN_NOTIONAL
	-4225: contract.ReasonAuthenticationFailed, // Nonce Expired: stale or repeated nonce (after a retry with a fresh one)
	-5021: contract.ReasonInvalidOrder,         // FOK order could not fill completely
	-5022: contract.ReasonPostOnlyRejected,     // GTX_ORDER_REJECT: post-only would take liquidity
}

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

// upstreamError turns an error answer of Aster's into the contract error.
func upstreamError(status, code int, msg string) *contract.Error {
	return venueErrors.Upstream(status, code, msg)
}

var (
	fallbackReason = fapi.FallbackReason
	isCode         = fapi.IsCode // whether err is the venue's error code
)
