package binance

import (
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// reasons maps Binance error codes (fact sheet §9; Binance's error-code
// page) to the upstream failure reasons of DESIGN §4. A code not listed
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
	-1021: contract.ReasonAuthenticationFailed, // INVALID_TIMESTAMP (after a clock resync)
	-1022: contract.ReasonAuthenticationFailed, // INVALID_SIGNATURE: wrong apiSecret
	-1102: contract.ReasonInvalidOrder,         // MANDATORY_PARAM_EMPTY_OR_MALFORMED
	-1111: contract.ReasonInvalidOrder,         // BAD_PRECISION
	-1116: contract.ReasonInvalidOrder,         // INVALID_ORDER_TYPE
	-1121: contract.ReasonInvalidOrder,         // BAD_SYMBOL
	-2010: contract.ReasonInvalidOrder,         // NEW_ORDER_REJECTED
	-2011: contract.ReasonOrderNotFound,        // CANCEL_REJECTED: unknown order sent
	-2013: contract.ReasonOrderNotFound,        // NO_SUCH_ORDER
	-2014: contract.ReasonAuthenticationFailed, // BAD_API_KEY_FMT
	-2015: contract.ReasonAuthenticationFailed, // REJECTED_MBX_KEY: invalid key, IP or permissions
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
	-4120: contract.ReasonInvalidOrder,         // conditional type on the regular order endpoint
	-4142: contract.ReasonInvalidOrder,         // stop would trigger immediately
	-4164: contract.ReasonInvalidOrder,         // MIN_NOTIONAL
	-4202: contract.ReasonPermissionDenied,     // leverage above 20x needs account age or KYC
	-4203: contract.ReasonPermissionDenied,     // leverage above 20x not allowed for this account
	-4205: contract.ReasonPermissionDenied,     // leverage above 20x within 30 days of opening
	-4206: contract.ReasonPermissionDenied,     // leverage restricted for the region
	-4403: contract.ReasonPermissionDenied,     // leverage limited by compliance
	-5021: contract.ReasonInvalidOrder,         // FOK order could not fill completely
	-5022: contract.ReasonPostOnlyRejected,     // GTX_ORDER_REJECT: post-only would take liquidity
	-5028: contract.ReasonAuthenticationFailed, // timestamp outside the matching engine's recvWindow
}

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

var (
	fallbackReason = fapi.FallbackReason
	isCode         = fapi.IsCode // whether err is the venue's error code
)
