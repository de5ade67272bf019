package fapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Codes are the error codes Binance USDⓈ-M documents and Aster copies
// (Binance's error-code page; Aster fact sheet §9), with their reasons;
// each venue adds its own (With).
var Codes = map[int]contract.Reason{
	-1000: contract.ReasonUnknown,              // UNKNOWN
	-1001: contract.ReasonUpstreamUnavailable,  // DISCONNECTED: internal error
	-1002: contract.ReasonPermissionDenied,     // UNAUTHORIZED
	-1003: contract.ReasonUpstreamRateLimited,  // TOO_MANY_REQUESTS
	-1007: contract.ReasonUpstreamUnavailable,  // TIMEOUT waiting for the backend; state unknown
	-1008: contract.ReasonUpstreamUnavailable,  // SERVER_BUSY
	-1011: contract.ReasonPermissionDenied,     // NON_WHITE_LIST: IP not whitelisted
	-1015: contract.ReasonUpstreamRateLimited,  // TOO_MANY_ORDERS
	-1016: contract.ReasonUpstreamUnavailable,  // SERVICE_SHUTTING_DOWN
	-1102: contract.ReasonInvalidOrder,         // MANDATORY_PARAM_EMPTY_OR_MALFORMED
	-1111: contract.ReasonInvalidOrder,         // BAD_PRECISION
	-1116: contract.ReasonInvalidOrder,         // INVALID_ORDER_TYPE
	-1121: contract.ReasonInvalidOrder,         // BAD_SYMBOL
	-2010: contract.ReasonInvalidOrder,         // NEW_ORDER_REJECTED
	-2011: contract.ReasonOrderNotFound,        // CANCEL_REJECTED: unknown order sent
	-2013: contract.ReasonOrderNotFound,        // NO_SUCH_ORDER
	-2014: contract.ReasonAuthenticationFailed, // BAD_API_KEY_FMT
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
	-5021: contract.ReasonInvalidOrder,         // FOK order could not fill completely
	-5022: contract.ReasonPostOnlyRejected,     // GTX_ORDER_REJECT: post-only would take liquidity
}

// With is Codes plus a venue's own codes.
func With(own map[int]contract.Reason) map[int]contract.Reason {
	out := make(map[int]contract.Reason, len(Codes)+len(own))
	for k, v := range Codes {
		out[k] = v
	}
	for k, v := range own {
		out[k] = v
	}
	return out
}

// Errors turn a venue's {code, msg} answers into contract errors: its
// table of codes, and what to do about each reason after its message.
type Errors struct {
	Venue   string
	Reasons map[int]contract.Reason
	Hints   map[contract.Reason]string
}

// Upstream is the contract error of an error answer; a code the table
// does not know is classified by its HTTP status (FallbackReason).
func (e Errors) Upstream(status, code int, msg string) *contract.Error {
	reason, ok := e.Reasons[code]
	if !ok {
		reason = FallbackReason(status)
	}
	ec := ""
	if code != 0 {
		ec = strconv.Itoa(code)
	}
	text := msg
	if text == "" {
		text = http.StatusText(status)
	}
	return contract.Upstream(reason, ec, msg, "%s answered HTTP %d, code %d: %s%s", e.Venue, status, code, text, e.Hints[reason])
}

// FallbackReason classifies an error code a table does not know by its
// HTTP status (venuekit.StatusReason); 418 is the venues' IP ban.
func FallbackReason(status int) contract.Reason {
	if status == http.StatusTeapot {
		return contract.ReasonUpstreamRateLimited
	}
	return venuekit.StatusReason(status)
}

// IsCode reports whether err is the venue's error code.
func IsCode(err error, code int) bool {
	var ce *contract.Error
	return errors.As(err, &ce) && ce.Code == contract.CodeExchangeError && ce.ExchangeCode == strconv.Itoa(code)
}
