package connector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

// Ambiguous reports whether a placement that failed with err may still
// have reached the venue: a timeout, a transport failure or an upstream
// 5xx (UPSTREAM_UNAVAILABLE, UNKNOWN). Its order must be looked up before
// the outcome is told or anything is placed again; a definitive refusal
// (bad order, margin, post-only, authentication, rate limit) placed
// nothing.
func Ambiguous(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	ce, ok := contract.AsError(err)
	if !ok {
		return true // not mapped by the adapter: a transport failure
	}
	switch ce.Code {
	case contract.CodeExchangeTimeout, contract.CodeInternal:
		return true
	case contract.CodeExchangeError:
		return ce.Reason == contract.ReasonUpstreamUnavailable || ce.Reason == contract.ReasonUnknown
	}
	return false
}

// reconcileReserve is the part of a placement's deadline kept back to look
// the order up when the venue does not answer in time, so the connector
// can still tell the client before the edge gives up.
func reconcileReserve(ctx context.Context, now time.Time) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return 2 * time.Second
	}
	return min(dl.Sub(now)/4, 2*time.Second)
}

// errVenueRejected is a look-up's answer when the venue has the order but
// refused it: nothing stands, so placing again is safe.
var errVenueRejected = errors.New("the exchange rejected the order")

// answerMargin is kept back from the last look-up so that the connector's
// answer reaches the edge before the edge's own deadline passes.
const answerMargin = 150 * time.Millisecond

// orderFingerprint describes an order by the parameters that make it that
// order, as placed (after rounding).
func orderFingerprint(o OrderRequest) map[string]string {
	fp := map[string]string{
		"type": string(o.Type), "market": o.Market.Canonical, "side": string(o.Side),
		"size": o.Size.String(), "reduceOnly": fmt.Sprint(o.ReduceOnly),
	}
	switch o.Type {
	case Limit:
		fp["price"], fp["postOnly"] = o.Price.String(), fmt.Sprint(o.PostOnly)
	case Stop:
		fp["triggerPrice"] = o.TriggerPrice.String()
	}
	if o.TakeProfit != nil {
		fp["takeProfit"] = o.TakeProfit.String()
	}
	if o.StopLoss != nil {
		fp["stopLoss"] = o.StopLoss.String()
	}
	return fp
}

func protectionFingerprint(p ProtectionRequest) map[string]string {
	fp := map[string]string{"type": "PROTECTION", "market": p.Market.Canonical, "side": string(p.PositionSide), "size": p.Size.String()}
	if p.TakeProfit != nil {
		fp["takeProfit"] = p.TakeProfit.String()
	}
	if p.StopLoss != nil {
		fp["stopLoss"] = p.StopLoss.String()
	}
	return fp
}

// conflict returns IDEMPOTENCY_CONFLICT when a stored record's fingerprint
// differs from the repeat's, naming the differing fields; records without
// a fingerprint (written before they had one) never conflict.
func conflict(clientID string, stored, repeat map[string]string) error {
	if stored == nil {
		return nil
	}
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(joinKeys(stored, repeat))) {
		if stored[k] != repeat[k] {
			diff = append(diff, fmt.Sprintf("%s %s (first %s)", k, orNone(repeat[k]), orNone(stored[k])))
		}
	}
	if len(diff) == 0 {
		return nil
	}
	return contract.Errorf(contract.CodeIdempotencyConflict,
		"clientOrderId %q was used in the last 24 h for another order: %s; use a new clientOrderId for a new order",
		clientID, strings.Join(diff, ", "))
}

func joinKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// foundResult turns an order found at the venue into the result its
// placement would have answered: errVenueRejected for a venue-side
// rejection, an unsettled error for a market order whose fill is unknown.
func foundResult(o OrderRequest, f FoundOrder) (any, error) {
	if f.Status == contract.StatusRejected {
		return nil, errVenueRejected
	}
	switch o.Type {
	case Limit:
		return contract.LimitOrderResult{OrderID: f.ID, Market: o.Market.Canonical, Side: o.Side, Size: f.Size,
			Price: f.Price, Status: f.Status, ClientOrderID: o.ClientOrderID}, nil
	case MarketType:
		return marketResult(o, f)
	default:
		trigger := o.TriggerPrice
		if f.TriggerPrice != nil {
			trigger = *f.TriggerPrice
		}
		return contract.StopOrderResult{OrderID: f.ID, Status: f.Status, TriggerPrice: trigger, ClientOrderID: o.ClientOrderID}, nil
	}
}
