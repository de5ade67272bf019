package connector

import (
	"context"
	"time"
)

// AccountEvent is one event a venue's private stream gave, normalized.
// Data is a contract.OrderEvent, FillEvent, PositionEvent, BalanceEvent or
// FundingEvent; its Market may be the venue's native symbol (the runtime
// makes it canonical, as for REST results). Time is the venue's time.
type AccountEvent struct {
	Time time.Time
	Data any
}

// AccountFeeder is implemented by adapters whose venue pushes account
// events on a private stream. FollowAccount connects for one credential,
// calls ready once the venue confirmed the subscription (the runtime then
// reconciles from REST, so nothing between ready and the first event is
// missed), calls emit for each event, and returns when ctx ends or the
// connection fails: a *contract.Error with reason AUTHENTICATION_FAILED
// when the venue refused the login (its message says the venue's reason,
// never the secret), any other error for a dropped connection. The
// runtime reconnects with backoff.
type AccountFeeder interface {
	FollowAccount(ctx context.Context, c Credential, ready func(), emit func(AccountEvent)) error
}
