package okx

import (
	"errors"
	"net/http"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// reasons maps OKX error codes (code or sCode; fact sheet §3 and OKX's
// error-code table, https://www.okx.com/docs-v5/en/#error-code) to the
// upstream failure reasons of DESIGN §4. A code not listed falls back on
// the HTTP status (venuekit.StatusReason).
var reasons = map[string]contract.Reason{
	"1":     contract.ReasonUnknown,              // operation failed, no item reason
	"50001": contract.ReasonUpstreamUnavailable,  // service temporarily unavailable
	"50002": contract.ReasonInvalidOrder,         // JSON syntax error
	"50004": contract.ReasonUpstreamUnavailable,  // endpoint request timeout: state unknown
	"50011": contract.ReasonUpstreamRateLimited,  // rate limit reached
	"50013": contract.ReasonUpstreamUnavailable,  // system busy
	"50014": contract.ReasonInvalidOrder,         // parameter required
	"50026": contract.ReasonUpstreamUnavailable,  // system error
	"50030": contract.ReasonPermissionDenied,     // no permission for this endpoint
	"50061": contract.ReasonUpstreamRateLimited,  // sub-account order rate limit
	"50100": contract.ReasonPermissionDenied,     // API frozen
	"50101": contract.ReasonAuthenticationFailed, // key of the other environment (live vs demo)
	"50102": contract.ReasonAuthenticationFailed, // timestamp expired (after a clock resync)
	"50103": contract.ReasonAuthenticationFailed, // OK-ACCESS-KEY missing
	"50104": contract.ReasonAuthenticationFailed, // OK-ACCESS-PASSPHRASE missing
	"50105": contract.ReasonAuthenticationFailed, // wrong passphrase
	"50106": contract.ReasonAuthenticationFailed, // OK-ACCESS-SIGN missing
	"50107": contract.ReasonAuthenticationFailed, // OK-ACCESS-TIMESTAMP missing
	"50110": contract.ReasonPermissionDenied,     // IP not whitelisted
	"50111": contract.ReasonAuthenticationFailed, // invalid OK-ACCESS-KEY
	"50112": contract.ReasonAuthenticationFailed, // invalid OK-ACCESS-TIMESTAMP
	"50113": contract.ReasonAuthenticationFailed, // invalid signature
	"50114": contract.ReasonAuthenticationFailed, // invalid authorization
	"50120": contract.ReasonPermissionDenied,     // key lacks the permission (trade)
	"51000": contract.ReasonInvalidOrder,         // parameter error
	"51001": contract.ReasonInvalidOrder,         // instrument does not exist
	"51004": contract.ReasonInsufficientMargin,   // above the position tier at this leverage
	"51005": contract.ReasonInvalidOrder,         // above the maximum order size
	"51006": contract.ReasonInvalidOrder,         // price outside the price limit
	"51008": contract.ReasonInsufficientMargin,   // insufficient balance / margin
	"51010": contract.ReasonPermissionDenied,     // not supported in the current account mode
	"51016": contract.ReasonInvalidOrder,         // duplicated clOrdId
	"51020": contract.ReasonInvalidOrder,         // below the minimum order size
	"51046": contract.ReasonInvalidOrder,         // trigger price on the wrong side (51046-51049)
	"51047": contract.ReasonInvalidOrder,
	"51048": contract.ReasonInvalidOrder,
	"51049": contract.ReasonInvalidOrder,
	"51065": contract.ReasonInvalidOrder,       // duplicated algoClOrdId
	"51101": contract.ReasonInvalidOrder,       // above the maximum order size
	"51121": contract.ReasonInvalidOrder,       // size not a multiple of the lot size
	"51131": contract.ReasonInsufficientMargin, // insufficient balance
	"51137": contract.ReasonInvalidOrder,       // above the highest buy price
	"51150": contract.ReasonInvalidOrder,       // size or price precision
	"51169": contract.ReasonInvalidOrder,       // reduce-only without a position to reduce
	"51400": contract.ReasonOrderNotFound,      // cancel: order does not exist or is done
	"51401": contract.ReasonOrderNotFound,      // cancel: already cancelled
	"51402": contract.ReasonOrderNotFound,      // cancel: already filled
	"51603": contract.ReasonOrderNotFound,      // order does not exist
	"59102": contract.ReasonInvalidOrder,       // leverage above the maximum
}

// hints say what to do about a reason, after OKX's own message.
var hints = map[contract.Reason]string{
	contract.ReasonAuthenticationFailed: "; check the credential's apiKey, apiSecret and passphrase (and the machine clock)",
	contract.ReasonPermissionDenied:     "; check the API key's permissions (trade), IP whitelist and the account mode",
	contract.ReasonInsufficientMargin:   "; reduce the size or add margin",
	contract.ReasonUpstreamUnavailable:  "; OKX did not process the request normally: retry shortly (a placement is looked up by its clientOrderId first)",
}

// codeHints replace the reason's hint where the code says more.
var codeHints = map[string]string{
	"50101": "; the API key belongs to the other OKX environment: a demo-trading key needs a testnet credential, a live key a mainnet one",
	"50105": "; the passphrase is the one chosen when the API key was created",
	"51010": "; switch the OKX account mode to Futures mode (or Multi-currency margin) on okx.com to trade perpetual swaps",
}

// upstreamError turns an OKX error answer into the contract error.
func upstreamError(status int, ec, msg string) *contract.Error {
	reason, ok := reasons[ec]
	if !ok {
		reason = venuekit.StatusReason(status)
	}
	text := msg
	if text == "" {
		text = http.StatusText(status)
	}
	hint, ok := codeHints[ec]
	if !ok {
		hint = hints[reason]
	}
	return contract.Upstream(reason, ec, msg, "OKX answered HTTP %d, code %s: %s%s", status, orNone(ec), text, hint)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// isCode reports whether err is OKX's error code.
func isCode(err error, ec string) bool {
	var ce *contract.Error
	return errors.As(err, &ce) && ce.Code == contract.CodeExchangeError && ce.ExchangeCode == ec
}
