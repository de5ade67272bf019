package hyperliquid

import (
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Per-address limits (fact sheet §10, Hyperliquid docs "Rate limits"): each
// user address (a sub-account or vault is a user of its own) may send
// 10 000 actions plus one per USDC traded; a batch of n orders or cancels
// counts n. Once used up, the venue lets the address send one action every
// 10 s and answers the rest with "Too many cumulative requests …". Cancels
// have a higher cap, so an address throttled for orders can still cancel.
//
// The venue alone knows an address's count, so the connector learns of the
// throttle from that answer and then holds further actions of the same class
// for the address until the 10 s have passed, answering
// UPSTREAM_RATE_LIMITED with retryAfter at once instead of spending the one
// request the venue would allow on certain failure. The hold is per process:
// another replica learns the same from its own first refusal.

// addressThrottle is how long a throttled address waits between actions.
const addressThrottle = 10 * time.Second

// Limit classes: cancels have their own, higher cap.
const (
	limitOrders  = "actions"
	limitCancels = "cancels"
)

// limitClass names the address budget an action spends.
func limitClass(action any) string {
	switch action.(type) {
	case CancelAction, *CancelAction, CancelByCloidAction, *CancelByCloidAction:
		return limitCancels
	}
	return limitOrders
}

// isAddressLimit reports the venue's answer to an address over its budget.
func isAddressLimit(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "too many cumulative requests")
}

// addressLimits remembers which addresses the venue throttles, until when.
type addressLimits struct {
	now  func() time.Time
	held venuekit.Memo[time.Time]
}

func newAddressLimits(now func() time.Time) *addressLimits { return &addressLimits{now: now} }

func limitKey(env contract.Environment, user, class string) string {
	return string(env) + "/" + user + "/" + class
}

// check refuses an action while its address and class are held.
func (l *addressLimits) check(env contract.Environment, user, class string) error {
	now := l.now()
	until, held := l.held.Get(limitKey(env, user, class), now, addressThrottle)
	if !held {
		return nil
	}
	wait := int(until.Sub(now).Seconds() + 0.999)
	e := contract.Upstream(contract.ReasonUpstreamRateLimited, "", "",
		"hyperliquid limits the %s of account %s to one every 10 s (its address budget is used up; trading volume raises it); retry in %d s",
		class, user, wait)
	e.RetryAfterSeconds = wait
	return e
}

// throttled records that the venue refused the address for its budget.
func (l *addressLimits) throttled(env contract.Environment, user, class string) {
	now := l.now()
	l.held.Put(limitKey(env, user, class), now.Add(addressThrottle), now)
}
