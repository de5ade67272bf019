package paradex

import (
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// reasons maps Paradex ApiError codes (OpenAPI responses.ApiError and the
// error codes ccxt knows) to the upstream failure reasons. A code not
// listed is UNKNOWN.
var reasons = map[string]contract.Reason{
	"NOT_ENOUGH_MARGIN":                      contract.ReasonInsufficientMargin,
	"VALIDATION_ERROR":                       contract.ReasonInvalidOrder,
	"BINDING_ERROR":                          contract.ReasonInvalidOrder,
	"INVALID_REQUEST_PARAMETER":              contract.ReasonInvalidOrder,
	"INVALID_ORDER_SIZE":                     contract.ReasonInvalidOrder,
	"MARKET_NOT_FOUND":                       contract.ReasonInvalidOrder,
	"MARKET_NOT_OPEN":                        contract.ReasonInvalidOrder,
	"INVALID_SYMBOL":                         contract.ReasonInvalidOrder,
	"BATCH_SIZE_OUT_OF_RANGE":                contract.ReasonInvalidOrder,
	"DUPLICATED_CLIENT_ID":                   contract.ReasonInvalidOrder,
	"INVALID_PRICE_PRECISION":                contract.ReasonInvalidOrder,
	"INVALID_TIMESTAMP":                      contract.ReasonInvalidOrder,
	"ORDER_ID_NOT_FOUND":                     contract.ReasonOrderNotFound,
	"CLIENT_ORDER_ID_NOT_FOUND":              contract.ReasonOrderNotFound,
	"ORDER_IS_CLOSED":                        contract.ReasonOrderNotFound,
	"ORDER_IS_NOT_OPEN":                      contract.ReasonOrderNotFound,
	"INVALID_ORDER_SIGNATURE":                contract.ReasonAuthenticationFailed,
	"STARKNET_SIGNATURE_VERIFICATION_FAILED": contract.ReasonAuthenticationFailed,
	"INVALID_STARKNET_SIGNATURE":             contract.ReasonAuthenticationFailed,
	"INVALID_STARKNET_ADDRESS":               contract.ReasonAuthenticationFailed,
	"NOT_ONBOARDED":                          contract.ReasonAuthenticationFailed,
	"ACCOUNT_NOT_FOUND":                      contract.ReasonAuthenticationFailed,
	"INVALID_TOKEN":                          contract.ReasonAuthenticationFailed,
	"UNAUTHORIZED_ERROR":                     contract.ReasonAuthenticationFailed,
	"PUBLIC_KEY_INVALID":                     contract.ReasonAuthenticationFailed,
	"INVALID_SUBKEY":                         contract.ReasonAuthenticationFailed,
	"GEO_IP_BLOCK":                           contract.ReasonPermissionDenied,
	"IP_NOT_ALLOWED":                         contract.ReasonPermissionDenied,
	"INVALID_TOKEN_SCOPE":                    contract.ReasonPermissionDenied,
	"NO_ACCESS_TO_MARKET":                    contract.ReasonPermissionDenied,
	"REQUEST_NOT_ALLOWED":                    contract.ReasonPermissionDenied,
	"SERVICE_UNAVAILABLE":                    contract.ReasonUpstreamUnavailable,
	"INTERNAL_ERROR":                         contract.ReasonUpstreamUnavailable,
	"SYSTEM_STATUS_CANCEL_ONLY":              contract.ReasonUpstreamUnavailable,
	"SYSTEM_STATUS_POST_ONLY":                contract.ReasonUpstreamUnavailable,
}

// hints say what to do about a reason, after Paradex's own message.
var hints = map[contract.Reason]string{
	contract.ReasonAuthenticationFailed: "; check the credential's accountAddress and starkPrivateKey (the account's main key or a registered subkey), its environment, and that the account is onboarded",
	contract.ReasonPermissionDenied:     "; the account or this IP may not use this market or endpoint",
	contract.ReasonInsufficientMargin:   "; reduce the size or add collateral",
	contract.ReasonInvalidOrder:         "; check the order against the market's rules (tick, size increment, minimum notional)",
	contract.ReasonUpstreamUnavailable:  "; Paradex did not process the request normally: retry shortly (a placement is looked up by its clientOrderId first)",
}

// apiError is Paradex's error body {"error","message","data"}.
type apiError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// upstreamError turns a Paradex error code and HTTP status into the
// contract error; the status decides when the code is unknown.
func upstreamError(status int, code, msg, what string) error {
	reason, ok := reasons[code]
	if !ok {
		reason = venuekit.StatusReason(status) // 429 is answered before (client.send)
	}
	exCode := code
	if exCode == "" {
		exCode = strconv.Itoa(status)
	}
	if msg == "" {
		msg = "no message"
	}
	return contract.Upstream(reason, exCode, msg, "Paradex answered HTTP %d %s to %s: %s%s", status, code, what, msg, hints[reason])
}

// cancelReasons maps an order's cancel_reason after Paradex accepted it
// (status CLOSED) to the reason it is reported with.
func cancelReason(r string) contract.Reason {
	switch r {
	case "NOT_ENOUGH_MARGIN":
		return contract.ReasonInsufficientMargin
	case "POST_ONLY_WOULD_CROSS":
		return contract.ReasonPostOnlyRejected
	}
	return contract.ReasonInvalidOrder
}
