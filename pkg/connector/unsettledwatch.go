package connector

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

// Placements whose outcome was unknown when their request ended (a
// timeout, a connector that died, a fill not read back) are settled in the
// background, so a repeat finds the result stored: by the credential's
// order events while this replica holds its feed healthy, by look-ups
// (FindOrder) every ProtectionCheck while it does not.

// pendingPlacement is one placement waiting to be settled.
type pendingPlacement struct {
	key, credID, clientID string
	orderID               string // when the venue named the order
	fp                    map[string]string
	// fromEvent is the placement's result from an order event; ok false
	// when the event cannot tell it (a market order's fee): then find.
	fromEvent func(contract.OrderEvent) (res any, ok bool, err error)
	find      func(context.Context) (any, bool, error)
	since     time.Time
}

type eventHit struct {
	p  *pendingPlacement
	ev contract.OrderEvent
}

// unsettledSet holds the pending placements and the recent order events
// (an event may come before its placement gives up).
type unsettledSet struct {
	mu     sync.Mutex
	byKey  map[string]*pendingPlacement
	recent map[string]contract.OrderEvent // credential ":" clientOrderId or orderId
	hits   chan eventHit
}

func newUnsettledSet() *unsettledSet {
	return &unsettledSet{byKey: map[string]*pendingPlacement{}, recent: map[string]contract.OrderEvent{},
		hits: make(chan eventHit, 1024)}
}

// add registers p; an order event already seen for it settles it at once.
func (u *unsettledSet) add(p *pendingPlacement) {
	if u == nil || p.fromEvent == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.byKey[p.key] = p
	for _, id := range []string{p.clientID, p.orderID} {
		if ev, ok := u.recent[p.credID+":"+id]; ok && id != "" {
			u.hit(p, ev)
			return
		}
	}
}

// drop forgets key once it is settled another way (a repeat found it).
func (u *unsettledSet) drop(key string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	delete(u.byKey, key)
	u.mu.Unlock()
}

// onEvent is the account feeds' hook: an order event naming a pending
// placement (by clientOrderId or orderId) settles it, off the feed's path.
func (u *unsettledSet) onEvent(cred string, data any) {
	ev, ok := data.(contract.OrderEvent)
	if u == nil || !ok {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.recent) > 4096 {
		clear(u.recent)
	}
	for _, id := range []string{ev.ClientOrderID, ev.OrderID} {
		if id != "" {
			u.recent[cred+":"+id] = ev
		}
	}
	for _, p := range u.byKey {
		if p.credID == cred && ((ev.ClientOrderID != "" && ev.ClientOrderID == p.clientID) || (p.orderID != "" && ev.OrderID == p.orderID)) {
			u.hit(p, ev)
			return
		}
	}
}

// hit queues p's settlement by ev; under mu. A full queue leaves p to the
// next event or look-up.
func (u *unsettledSet) hit(p *pendingPlacement, ev contract.OrderEvent) {
	select {
	case u.hits <- eventHit{p: p, ev: ev}:
	default:
	}
}

func (u *unsettledSet) pending() []*pendingPlacement {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]*pendingPlacement, 0, len(u.byKey))
	for _, p := range u.byKey {
		out = append(out, p)
	}
	return out
}

// settleLoop settles pending placements as their events come, and looks
// up those of credentials whose feed this replica does not hold healthy.
func (r *Runtime) settleLoop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case h := <-r.unsettled.hits:
			r.settleOnEvent(ctx, h)
		case <-t.C:
			r.pollUnsettled(ctx, interval)
		}
	}
}

func (r *Runtime) settleOnEvent(ctx context.Context, h eventHit) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, ok, err := h.p.fromEvent(h.ev)
	if err == nil && !ok {
		if !h.ev.Final() {
			return // a market order not done yet: its final event comes
		}
		res, ok, err = h.p.find(cctx) // the fill's fee is not in the event
	}
	r.settled(cctx, h.p, res, ok, err, "event")
}

// pollUnsettled looks up the placements the feeds do not settle; one not
// settled within the idempotency TTL is left to a repeat.
func (r *Runtime) pollUnsettled(ctx context.Context, interval time.Duration) {
	for _, p := range r.unsettled.pending() {
		if r.cfg.Now().Sub(p.since) > IdempotencyTTL {
			r.unsettled.drop(p.key)
			continue
		}
		if r.feeds.driven(p.credID, false) {
			continue // its order events settle it
		}
		r.log.Debug("unsettled placement polled", "credential_id", p.credID, "client_order_id", p.clientID)
		cctx, cancel := context.WithTimeout(ctx, interval)
		res, ok, err := p.find(cctx)
		r.settled(cctx, p, res, ok, err, "poll")
		cancel()
	}
}

// settled stores what a look-up or event found of p. A placement the
// venue rejected is only forgotten: a repeat finds the rejection and takes
// the claim over (releasing it here could drop the repeat's own claim).
func (r *Runtime) settled(ctx context.Context, p *pendingPlacement, res any, ok bool, err error, by string) {
	switch {
	case errors.Is(err, errVenueRejected):
	case err != nil || !ok:
		return // not at the venue yet, or still unsettled
	default:
		body, merr := json.Marshal(res)
		if merr != nil {
			return
		}
		if err := r.idem.Complete(context.WithoutCancel(ctx), p.key, Record{Result: body, Fingerprint: p.fp}); err != nil {
			r.log.Warn("settled placement not stored", "err", err, "client_order_id", p.clientID)
			return
		}
	}
	r.unsettled.drop(p.key)
	r.log.Info("unsettled placement settled", "credential_id", p.credID, "client_order_id", p.clientID, "by", by)
}

// eventResult is an order placement's result from an order event; a
// market order's is not (its fee comes from a look-up).
func eventResult(o OrderRequest, attached *contract.AttachedProtection) func(contract.OrderEvent) (any, bool, error) {
	return func(ev contract.OrderEvent) (any, bool, error) {
		if o.Type == MarketType {
			return nil, false, nil
		}
		f := FoundOrder{Order: contract.Order{ID: ev.OrderID, Market: ev.Market, Side: ev.Side, Type: ev.Type, Size: ev.Size,
			FilledSize: ev.FilledSize, Status: ev.Status, TriggerPrice: ev.TriggerPrice, ReduceOnly: ev.ReduceOnly,
			ClientOrderID: ev.ClientOrderID}}
		if ev.Price != nil {
			f.Price = *ev.Price
		}
		res, err := foundResult(o, f)
		if err != nil {
			return nil, false, err
		}
		return withProtection(res, attached), true, nil
	}
}

// unsettledOrderID is the order id an unsettled error names, if any.
func unsettledOrderID(errs ...error) string {
	for _, err := range errs {
		var u *unsettledError
		if errors.As(err, &u) {
			return u.orderID
		}
	}
	return ""
}
