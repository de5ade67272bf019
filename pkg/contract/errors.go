package contract

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is a public error code, as it appears in the `code` field of the error envelope.
type Code string

// Error codes of SPEC §7 and DESIGN §4, plus the admin API's.
const (
	CodeMissingAPIKey        Code = "MISSING_API_KEY"
	CodeInvalidKeyFormat     Code = "INVALID_KEY_FORMAT"
	CodeInvalidAPIKey        Code = "INVALID_API_KEY"
	CodeKeyRevoked           Code = "KEY_REVOKED"
	CodeKeyExpired           Code = "KEY_EXPIRED"
	CodeTierInsufficient     Code = "TIER_INSUFFICIENT"
	CodeOperationNotAllowed  Code = "OPERATION_NOT_ALLOWED"
	CodeCredentialNotAllowed Code = "CREDENTIAL_NOT_ALLOWED"
	CodeExchangeNotAllowed   Code = "EXCHANGE_NOT_ALLOWED"
	CodeEnvironmentMismatch  Code = "ENVIRONMENT_MISMATCH"
	CodeMissingOperation     Code = "MISSING_OPERATION"
	CodeUnknownOperation     Code = "UNKNOWN_OPERATION"
	CodeInvalidJSON          Code = "INVALID_JSON"
	CodeInvalidRequest       Code = "INVALID_REQUEST"
	CodeUnknownMarket        Code = "UNKNOWN_MARKET"
	CodeCredentialNotFound   Code = "CREDENTIAL_NOT_FOUND"
	CodeMethodNotAllowed     Code = "METHOD_NOT_ALLOWED"
	CodeNotFound             Code = "NOT_FOUND"
	CodePayloadTooLarge      Code = "PAYLOAD_TOO_LARGE"
	CodeRateLimited          Code = "RATE_LIMITED"
	CodeExchangeError        Code = "EXCHANGE_ERROR"
	CodeExchangeUnavailable  Code = "EXCHANGE_UNAVAILABLE"
	CodeExchangeTimeout      Code = "EXCHANGE_TIMEOUT"
	CodeInternal             Code = "INTERNAL_ERROR"
	CodeKeyLimitReached      Code = "KEY_LIMIT_REACHED"
	CodeAdminUnauthorized    Code = "ADMIN_UNAUTHORIZED"
	CodeAccountNotFound      Code = "ACCOUNT_NOT_FOUND"
	CodeAPIKeyNotFound       Code = "API_KEY_NOT_FOUND"
	// CodeIdempotencyConflict: a clientOrderId repeated with other parameters (DESIGN §12).
	CodeIdempotencyConflict Code = "IDEMPOTENCY_CONFLICT"
	// CodeServiceUnavailable: a dependency of the gateway itself (Redis, the
	// keys service, NATS) is down; distinct from EXCHANGE_UNAVAILABLE.
	CodeServiceUnavailable Code = "SERVICE_UNAVAILABLE"
	// Guard refusals (DESIGN §12): the key's guards forbid the call.
	CodeKeyReadOnly           Code = "KEY_READ_ONLY"
	CodeMarketNotAllowed      Code = "MARKET_NOT_ALLOWED"
	CodeOrderNotionalExceeded Code = "ORDER_NOTIONAL_EXCEEDED"
	CodeDailyNotionalExceeded Code = "DAILY_NOTIONAL_EXCEEDED"
	CodeLeverageExceeded      Code = "LEVERAGE_EXCEEDED"
	// CodePositionNotionalExceeded: the position after the order plus the
	// same-side resting orders would pass maxPositionNotional (DESIGN §13).
	CodePositionNotionalExceeded Code = "POSITION_NOTIONAL_EXCEEDED"
)

var codeStatus = map[Code]int{
	CodeMissingAPIKey:            http.StatusUnauthorized,
	CodeInvalidKeyFormat:         http.StatusUnauthorized,
	CodeInvalidAPIKey:            http.StatusUnauthorized,
	CodeKeyRevoked:               http.StatusUnauthorized,
	CodeKeyExpired:               http.StatusUnauthorized,
	CodeTierInsufficient:         http.StatusForbidden,
	CodeOperationNotAllowed:      http.StatusForbidden,
	CodeCredentialNotAllowed:     http.StatusForbidden,
	CodeExchangeNotAllowed:       http.StatusForbidden,
	CodeEnvironmentMismatch:      http.StatusForbidden,
	CodeMissingOperation:         http.StatusBadRequest,
	CodeUnknownOperation:         http.StatusBadRequest,
	CodeInvalidJSON:              http.StatusBadRequest,
	CodeInvalidRequest:           http.StatusBadRequest,
	CodeUnknownMarket:            http.StatusBadRequest,
	CodeCredentialNotFound:       http.StatusNotFound,
	CodeMethodNotAllowed:         http.StatusMethodNotAllowed,
	CodeNotFound:                 http.StatusNotFound,
	CodePayloadTooLarge:          http.StatusRequestEntityTooLarge,
	CodeRateLimited:              http.StatusTooManyRequests,
	CodeExchangeError:            http.StatusBadGateway,
	CodeExchangeUnavailable:      http.StatusServiceUnavailable,
	CodeExchangeTimeout:          http.StatusGatewayTimeout,
	CodeInternal:                 http.StatusInternalServerError,
	CodeKeyLimitReached:          http.StatusConflict,
	CodeAdminUnauthorized:        http.StatusUnauthorized,
	CodeAccountNotFound:          http.StatusNotFound,
	CodeAPIKeyNotFound:           http.StatusNotFound,
	CodeIdempotencyConflict:      http.StatusConflict,
	CodeServiceUnavailable:       http.StatusServiceUnavailable,
	CodeKeyReadOnly:              http.StatusForbidden,
	CodeMarketNotAllowed:         http.StatusForbidden,
	CodeOrderNotionalExceeded:    http.StatusForbidden,
	CodeDailyNotionalExceeded:    http.StatusForbidden,
	CodeLeverageExceeded:         http.StatusForbidden,
	CodePositionNotionalExceeded: http.StatusForbidden,
}

// Codes returns every known error code.
func Codes() []Code {
	out := make([]Code, 0, len(codeStatus))
	for c := range codeStatus {
		out = append(out, c)
	}
	return out
}

// Status returns the HTTP status of a code; unknown codes are 500.
func (c Code) Status() int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Reason refines EXCHANGE_ERROR: what kind of upstream failure happened.
type Reason string

// Upstream failure reasons (DESIGN §4 step 10).
const (
	ReasonInsufficientMargin   Reason = "INSUFFICIENT_MARGIN"
	ReasonInvalidOrder         Reason = "INVALID_ORDER"
	ReasonPostOnlyRejected     Reason = "POST_ONLY_REJECTED"
	ReasonOrderNotFound        Reason = "ORDER_NOT_FOUND"
	ReasonAuthenticationFailed Reason = "AUTHENTICATION_FAILED"
	ReasonPermissionDenied     Reason = "PERMISSION_DENIED"
	ReasonUpstreamRateLimited  Reason = "UPSTREAM_RATE_LIMITED"
	ReasonUpstreamUnavailable  Reason = "UPSTREAM_UNAVAILABLE"
	ReasonUnknown              Reason = "UNKNOWN"
)

// Error is the one error type that crosses service boundaries and reaches
// clients. Its JSON form is the error envelope of SPEC §7 (without success).
type Error struct {
	Code            Code   `json:"code"`
	Message         string `json:"error"`
	Reason          Reason `json:"reason,omitempty"`
	ExchangeCode    string `json:"exchangeCode,omitempty"`
	ExchangeMessage string `json:"exchangeMessage,omitempty"`
	// RetryAfterSeconds is set with RATE_LIMITED, UPSTREAM_RATE_LIMITED and
	// SERVICE_UNAVAILABLE.
	RetryAfterSeconds int `json:"retryAfter,omitempty"`
}

// Error implements error.
func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.Reason, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Status is the HTTP status for this error.
func (e *Error) Status() int { return e.Code.Status() }

// Errorf builds an Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Upstream builds an EXCHANGE_ERROR with a reason and the exchange's own code and message.
func Upstream(reason Reason, exchangeCode, exchangeMessage, format string, args ...any) *Error {
	return &Error{
		Code:            CodeExchangeError,
		Message:         fmt.Sprintf(format, args...),
		Reason:          reason,
		ExchangeCode:    exchangeCode,
		ExchangeMessage: exchangeMessage,
	}
}

// InternalMessage is the only message a client sees for a gateway fault.
const InternalMessage = "internal gateway error; quote the X-Request-Id when reporting it"

// AsError returns err as *Error; anything else becomes INTERNAL_ERROR with a
// fixed message, so internals never leak. The second result reports whether
// err was already a contract error.
func AsError(err error) (*Error, bool) {
	var ce *Error
	if errors.As(err, &ce) {
		return ce, true
	}
	return &Error{Code: CodeInternal, Message: InternalMessage}, false
}
