package connector

import (
	"context"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

// The protection watcher on events: while a credential's account feed is
// healthy its holder acts on the pairs as the events come (a leg final:
// cancel its sibling; the position flat: cancel both), and watchLoop does
// not poll them.

// protectionEvents hands one feed's events to the watcher, off the feed's
// publishing path.
type protectionEvents struct {
	r      *Runtime
	cred   Credential
	ch     chan any
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *Runtime) protectionWorker(ctx context.Context, cred Credential) *protectionEvents {
	ctx, cancel := context.WithCancel(ctx)
	p := &protectionEvents{r: r, cred: cred, ch: make(chan any, 1024), cancel: cancel, done: make(chan struct{})}
	if r.linksProtection() {
		close(p.done)
		p.ch = nil
		return p
	}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-ctx.Done():
				return
			case data := <-p.ch:
				// A cancel under way finishes though the feed drops meanwhile.
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				r.protectOnEvent(cctx, cred, data)
				cancel()
			}
		}
	}()
	return p
}

// handle queues an event's data; one the watcher acts on never waits
// behind a full queue of others (the poll catches up then).
func (p *protectionEvents) handle(data any) {
	if p.ch == nil {
		return
	}
	switch d := data.(type) {
	case contract.OrderEvent:
		if !d.Final() {
			return
		}
	case contract.PositionEvent:
	default:
		return
	}
	select {
	case p.ch <- data:
	default:
	}
}

// stop ends the worker (a cancel it is making finishes first).
func (p *protectionEvents) stop() {
	p.cancel()
	<-p.done
}

// protectOnEvent acts on the pairs of cred an order or position event concerns.
func (r *Runtime) protectOnEvent(ctx context.Context, cred Credential, data any) {
	pairs, err := r.protections.List(ctx)
	if err != nil {
		r.log.Warn("protection pairs not listed", "err", err)
		return
	}
	for _, p := range pairs {
		if p.CredentialID != cred.ID {
			continue
		}
		var cancel []string
		why := ""
		switch d := data.(type) {
		case contract.OrderEvent:
			switch d.OrderID {
			case p.TPOrderID:
				cancel, why = []string{p.SLOrderID}, "sibling leg "+d.Status
			case p.SLOrderID:
				cancel, why = []string{p.TPOrderID}, "sibling leg "+d.Status
			default:
				continue
			}
		case contract.PositionEvent:
			if d.Market != p.Market {
				continue
			}
			if d.Side != contract.PositionFlat && d.Size.IsPositive() {
				if !p.SeenPosition {
					p.SeenPosition = true
					_ = r.protections.Put(ctx, p)
				}
				continue
			}
			if !p.SeenPosition {
				continue
			}
			cancel, why = []string{p.TPOrderID, p.SLOrderID}, "position closed"
		}
		r.cancelLegs(ctx, cred, p, cancel, why)
	}
}

// cancelLegs cancels what is left of pair p and forgets it.
func (r *Runtime) cancelLegs(ctx context.Context, cred Credential, p WatchedPair, legs []string, why string) {
	if ok, err := r.protections.Lock(ctx, p.ID, 2*time.Second); err != nil || !ok {
		return // being checked elsewhere
	}
	m, err := r.markets.resolve(ctx, r.adapter, cred, p.Market)
	if err != nil {
		r.log.Warn("protection pair's market not resolved", "err", err, "pair", p.ID)
		return
	}
	for _, id := range legs {
		if id == "" {
			continue
		}
		err := r.adapter.CancelOrder(ctx, cred, id, &m)
		if ce, ok := contract.AsError(err); err != nil && !(ok && ce.Reason == contract.ReasonOrderNotFound) {
			r.log.Warn("protection leg not cancelled; the poll retries", "err", err, "credential_id", p.CredentialID, "order_id", id)
			return
		}
		if err == nil {
			r.log.Info("protection leg cancelled", "credential_id", p.CredentialID, "order_id", id, "why", why, "by", "event")
		}
	}
	if err := r.protections.Remove(ctx, p.ID); err != nil {
		r.log.Warn("protection pair not removed", "err", err, "pair", p.ID)
	}
}
