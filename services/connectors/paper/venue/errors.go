package venue

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/perpgate/perpgate/pkg/paper"
)

// Error kinds on the wire.
const (
	KindPostOnlyRejected   = "POST_ONLY_REJECTED"
	KindInsufficientMargin = "INSUFFICIENT_MARGIN"
	KindReduceOnly         = "REDUCE_ONLY"
	KindOrderNotFound      = "ORDER_NOT_FOUND"
	KindUnknownMarket      = "UNKNOWN_MARKET"
	KindInvalidOrder       = "INVALID_ORDER"
	KindBadRequest         = "BAD_REQUEST"
	KindNotFound           = "NOT_FOUND" // no such route
	KindInternal           = "INTERNAL"  // a venue fault, or an error body the client could not read
	KindTooLarge           = "TOO_LARGE" // the client's own: an answer larger than it reads
)

// kinds maps engine errors to wire kinds and statuses, first match wins.
var kinds = []struct {
	err    error
	kind   string
	status int
}{
	{paper.ErrPostOnlyWouldCross, KindPostOnlyRejected, http.StatusUnprocessableEntity},
	{paper.ErrInsufficientMargin, KindInsufficientMargin, http.StatusUnprocessableEntity},
	{paper.ErrReduceOnly, KindReduceOnly, http.StatusUnprocessableEntity},
	{paper.ErrOrderNotFound, KindOrderNotFound, http.StatusNotFound},
	{paper.ErrUnknownMarket, KindUnknownMarket, http.StatusNotFound},
	{paper.ErrInvalidOrder, KindInvalidOrder, http.StatusBadRequest},
	{paper.ErrInvalidRequest, KindBadRequest, http.StatusBadRequest},
}

// Error is an error answer of the venue, as the Client returns it.
type Error struct {
	Kind    string // one of the Kind constants
	Message string
	Status  int // HTTP status
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("paper venue: %s (%d): %s", e.Kind, e.Status, e.Message)
}

// badRequest makes a BAD_REQUEST error.
func badRequest(format string, args ...any) *Error {
	return &Error{Kind: KindBadRequest, Message: fmt.Sprintf(format, args...), Status: http.StatusBadRequest}
}

// toError turns an engine error into a wire error; unknown errors become
// INTERNAL with a fixed message (ok is false then, so the caller logs it).
func toError(err error) (e *Error, ok bool) {
	if errors.As(err, &e) {
		return e, true
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return &Error{Kind: k.kind, Message: err.Error(), Status: k.status}, true
		}
	}
	return &Error{Kind: KindInternal, Message: "internal error", Status: http.StatusInternalServerError}, false
}
