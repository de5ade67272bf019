package venuekit

import (
	"net/http"

	"github.com/perpgate/perpgate/pkg/contract"
)

// StatusReason classifies an HTTP error status when the venue's code
// table does not know the answer's code: 429 rate-limited, 401 an
// authentication failure, 403 a permission (or WAF) refusal, 408 and 5xx
// the venue not processing the request, anything else unknown.
func StatusReason(status int) contract.Reason {
	switch {
	case status == http.StatusTooManyRequests:
		return contract.ReasonUpstreamRateLimited
	case status == http.StatusUnauthorized:
		return contract.ReasonAuthenticationFailed
	case status == http.StatusForbidden:
		return contract.ReasonPermissionDenied
	case status >= 500 || status == http.StatusRequestTimeout:
		return contract.ReasonUpstreamUnavailable
	}
	return contract.ReasonUnknown
}
