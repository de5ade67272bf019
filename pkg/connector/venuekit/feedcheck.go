package venuekit

import (
	"errors"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// FeedRefused is the end of an account feed whose credential check
// failed: a credential the venue rejected is AUTHENTICATION_FAILED with
// the venue's reason; any other failure stays as it is.
func FeedRefused(venue, credID string, err error) error {
	var rej *connector.CredentialRejected
	if errors.As(err, &rej) {
		return contract.Upstream(contract.ReasonAuthenticationFailed, rej.Reason.Code, rej.Reason.Message,
			"%s refused the account feed of credential %s: %s", venue, credID, rej.Reason.Message)
	}
	return err
}

// OrPositive is v, or def when v is not positive (a setting left unset).
func OrPositive[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
