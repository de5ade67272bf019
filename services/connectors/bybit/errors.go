package bybit

import (
	"errors"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// reasons maps Bybit v5 retCodes (error page, docs/v5/error) to the
// upstream failure reasons of DESIGN §4. A code not listed is UNKNOWN.
var reasons = map[int]contract.Reason{
	-1:     contract.ReasonAuthenticationFailed, // request expired (UTA)
	10001:  contract.ReasonInvalidOrder,         // parameter error (precision, missing field)
	10002:  contract.ReasonAuthenticationFailed, // timestamp outside recv_window (after a clock resync)
	10003:  contract.ReasonAuthenticationFailed, // invalid API key, or a key of another environment
	10004:  contract.ReasonAuthenticationFailed, // signature error: wrong apiSecret
	10005:  contract.ReasonPermissionDenied,     // permission denied for this key
	10006:  contract.ReasonUpstreamRateLimited,  // too many visits (per-UID limit)
	10007:  contract.ReasonAuthenticationFailed, // user authentication failed
	10009:  contract.ReasonPermissionDenied,     // IP banned
	10010:  contract.ReasonPermissionDenied,     // unmatched IP: not on the key's whitelist
	10014:  contract.ReasonInvalidOrder,         // invalid duplicate request
	10016:  contract.ReasonUpstreamUnavailable,  // server error / system overload
	10024:  contract.ReasonPermissionDenied,     // compliance rules: region restricted
	10028:  contract.ReasonPermissionDenied,     // unified trading account only
	33004:  contract.ReasonAuthenticationFailed, // API key expired
	110001: contract.ReasonOrderNotFound,        // order does not exist
	110003: contract.ReasonInvalidOrder,         // price outside the allowed band
	110004: contract.ReasonInsufficientMargin,   // wallet balance insufficient
	110006: contract.ReasonInsufficientMargin,   // available balance insufficient
	110007: contract.ReasonInsufficientMargin,   // available balance insufficient
	110008: contract.ReasonOrderNotFound,        // order already completed or cancelled
	110009: contract.ReasonInvalidOrder,         // too many stop orders
	110010: contract.ReasonOrderNotFound,        // order already cancelled
	110012: contract.ReasonInsufficientMargin,   // insufficient available balance
	110013: contract.ReasonInvalidOrder,         // leverage not allowed by the risk limit
	110017: contract.ReasonInvalidOrder,         // reduce-only: quantity rounds to zero or no position
	110020: contract.ReasonInvalidOrder,         // more than 500 active orders
	110023: contract.ReasonInvalidOrder,         // reduce-only restriction
	110024: contract.ReasonInvalidOrder,         // position mode: a position exists
	110025: contract.ReasonInvalidOrder,         // position mode unchanged
	110028: contract.ReasonInvalidOrder,         // position mode: open orders exist
	110043: contract.ReasonInvalidOrder,         // leverage not modified (setLeverage treats it as done)
	110044: contract.ReasonInsufficientMargin,   // available margin insufficient
	110045: contract.ReasonInsufficientMargin,   // wallet balance insufficient
	110072: contract.ReasonInvalidOrder,         // orderLinkId is duplicate
	110088: contract.ReasonPermissionDenied,     // unified trading account required
	110092: contract.ReasonInvalidOrder,         // trigger expected to rise, price below the trigger
	110093: contract.ReasonInvalidOrder,         // trigger expected to fall, price above the trigger
	110094: contract.ReasonInvalidOrder,         // below the minimum order value
}

// hints say what to do about a reason, after Bybit's own message.
var hints = map[contract.Reason]string{
	contract.ReasonAuthenticationFailed: "; check the credential's apiKey, apiSecret and environment (a demo-trading key needs demo:true) and the machine clock",
	contract.ReasonPermissionDenied:     "; check the API key's permissions (contract trading), its IP whitelist and that the account is a unified trading account",
	contract.ReasonInsufficientMargin:   "; reduce the size or add margin",
	contract.ReasonUpstreamUnavailable:  "; Bybit did not process the request normally: retry shortly (a placement is looked up by its clientOrderId first)",
}

// upstreamError turns a Bybit retCode into the contract error.
func upstreamError(code int, msg string) *contract.Error {
	reason, ok := reasons[code]
	if !ok {
		reason = contract.ReasonUnknown
	}
	if msg == "" {
		msg = "no message"
	}
	return contract.Upstream(reason, strconv.Itoa(code), msg, "Bybit answered retCode %d: %s%s", code, msg, hints[reason])
}

// httpError is the error for an HTTP status other than 200, 403 and 429
// (guide: 400 bad method, 401 bad auth headers, 404 wrong path or a
// category that does not match the account, 5xx server side).
func httpError(status int, r request) *contract.Error {
	reason := venuekit.StatusReason(status)
	return contract.Upstream(reason, strconv.Itoa(status), "", "Bybit answered HTTP %d to %s %s%s", status, r.method, r.path, hints[reason])
}

// isCode reports whether err is Bybit's retCode.
func isCode(err error, code int) bool {
	var ce *contract.Error
	return errors.As(err, &ce) && ce.Code == contract.CodeExchangeError && ce.ExchangeCode == strconv.Itoa(code)
}
