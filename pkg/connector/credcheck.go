package connector

import (
	"errors"
	"fmt"

	"github.com/perpgate/perpgate/pkg/contract"
)

// A testCredentials that the venue (or the stored secret itself) refuses
// answers valid:false with the reason (DESIGN §13), never the secret.
// Adapters return these errors from TestCredentials; dispatch turns them
// into the answer.

// CredentialRejected is TestCredentials' error for a refused credential.
type CredentialRejected struct{ Reason contract.CredentialReason }

func (e *CredentialRejected) Error() string {
	return "credential rejected: " + e.Reason.Code + ": " + e.Reason.Message
}

// Rejected is a refusal the adapter decided itself (no venue code), e.g.
// an agent not approved for the account. The message must hold no secret.
func Rejected(code, format string, args ...any) error {
	return &CredentialRejected{contract.CredentialReason{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// BadSecret is the refusal of a stored secret exchange x cannot use; the
// message says nothing of its content.
func BadSecret(x contract.Exchange) error {
	return Rejected("INVALID_SECRET", "the stored secret is not a usable %s secret; replace the credential", x)
}

// RejectedBy turns a venue's authentication or permission refusal into a
// CredentialRejected carrying the venue's code and message; any other
// error (the venue down, rate limits) is returned unchanged.
func RejectedBy(err error) error {
	ce, ok := contract.AsError(err)
	if !ok || ce.Code != contract.CodeExchangeError ||
		(ce.Reason != contract.ReasonAuthenticationFailed && ce.Reason != contract.ReasonPermissionDenied) {
		return err
	}
	code, msg := ce.ExchangeCode, ce.ExchangeMessage
	if code == "" {
		code = string(ce.Reason)
	}
	if msg == "" {
		msg = ce.Message
	}
	return Rejected(code, "%s", msg)
}

// testCredentialsResult is the answer to an adapter's TestCredentials.
func testCredentialsResult(x contract.Exchange, valid bool, err error) (contract.TestCredentialsResult, error) {
	res := contract.TestCredentialsResult{Valid: valid, Exchange: x}
	var rej *CredentialRejected
	switch {
	case errors.As(err, &rej):
		res.Valid, res.Reason = false, &rej.Reason
		return res, nil
	case err != nil:
		return res, err
	case !valid:
		res.Reason = &contract.CredentialReason{Code: "REJECTED", Message: string(x) + " refused the credential"}
	}
	return res, nil
}

// IsRejected reports whether err is a refused credential (valid:false).
func IsRejected(err error) bool {
	var rej *CredentialRejected
	return errors.As(err, &rej)
}
