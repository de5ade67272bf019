package fapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/perpgate/perpgate/pkg/contract"
)

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
// HTTP status.
func FallbackReason(status int) contract.Reason {
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusTeapot:
		return contract.ReasonUpstreamRateLimited
	case status == http.StatusUnauthorized:
		return contract.ReasonAuthenticationFailed
	case status == http.StatusForbidden: // WAF block
		return contract.ReasonPermissionDenied
	case status >= 500 || status == http.StatusRequestTimeout:
		return contract.ReasonUpstreamUnavailable
	}
	return contract.ReasonUnknown
}

// IsCode reports whether err is the venue's error code.
func IsCode(err error, code int) bool {
	var ce *contract.Error
	return errors.As(err, &ce) && ce.Code == contract.CodeExchangeError && ce.ExchangeCode == strconv.Itoa(code)
}
