package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
)

// The extension operations the edge answers from the account event
// stream (DESIGN §13), getEvents and waitForOrder, and getCredentials.

// serveAtEdge runs an operation marked AtEdge for an authorized call.
func (s *Server) serveAtEdge(ctx context.Context, key contract.KeyInfo, cred contract.CredentialInfo, op *contract.Operation, params any) (json.RawMessage, *contract.Error) {
	sub := &subscription{key: key, cred: cred}
	var result any
	var ce *contract.Error
	switch p := params.(type) {
	case *contract.NoParams:
		if op.Name != contract.OpGetCredentials {
			return nil, s.internal(ctx, "serve "+op.Name, fmt.Errorf("no edge handler for %s", op.Name))
		}
		result, ce = s.getCredentials(ctx, key)
	case *contract.GetEventsParams:
		result, ce = s.getEvents(ctx, sub, p)
	case *contract.WaitForOrderParams:
		result, ce = s.waitForOrder(ctx, sub, p)
	default:
		return nil, s.internal(ctx, "serve "+op.Name, fmt.Errorf("no edge handler for %T", params))
	}
	if ce != nil {
		return nil, ce
	}
	b, err := json.Marshal(result)
	if err != nil {
		return nil, s.internal(ctx, "encode "+op.Name, err)
	}
	return b, nil
}

func (s *Server) getEvents(ctx context.Context, sub *subscription, p *contract.GetEventsParams) (contract.GetEventsResult, *contract.Error) {
	types, ce := parseTypes(p.Types)
	if ce != nil {
		return contract.GetEventsResult{}, ce
	}
	sub.types = types
	seq, ok, err := events.ParseID(p.After)
	if err != nil {
		return contract.GetEventsResult{}, contract.Errorf(contract.CodeInvalidRequest,
			"field \"after\": %q is not an event id; pass the id of the last event you have, or the next of the last answer", p.After)
	}
	s.interest.poke(sub.cred.Exchange, sub.cred.ID)
	page, err := s.eventLog.Read(ctx, sub.cred.Exchange, sub.cred.ID, types, events.Where{After: seq, HasAfter: ok}, p.Limit)
	if err != nil {
		return contract.GetEventsResult{}, s.eventsUnavailable(ctx, err)
	}
	out := contract.GetEventsResult{Events: []contract.Event{}, Next: page.Next}
	if page.Reset {
		out.Events = append(out.Events, resetEvent(sub, page.Next))
	}
	for _, ev := range page.Events {
		if sub.wants(&ev) {
			out.Events = append(out.Events, ev)
		}
	}
	return out, nil
}

// orderTarget says which order a wait is about.
type orderTarget struct{ orderID, clientOrderID string }

func (t orderTarget) matches(o *contract.OrderEvent) bool {
	return (t.orderID != "" && o.OrderID == t.orderID) || (t.clientOrderID != "" && o.ClientOrderID == t.clientOrderID)
}

// reached reports whether o meets the wait's condition; change is met by
// any event after the call began, never by the state found at the start.
func reached(until string, o *contract.OrderEvent, atStart bool) bool {
	switch until {
	case "filled":
		return o.Status == "FILLED"
	case "done":
		return o.Final()
	}
	return !atStart
}

// waitForOrder follows the credential's order events (opened before the
// look back, so no event falls between them), finds the order's latest
// state among the kept ones, and waits for the condition until its own
// timeout, not the request's: a client may wait up to a minute.
func (s *Server) waitForOrder(ctx context.Context, sub *subscription, p *contract.WaitForOrderParams) (contract.WaitForOrderResult, *contract.Error) {
	if (p.OrderID == "") == (p.ClientOrderID == "") {
		return contract.WaitForOrderResult{}, contract.Errorf(contract.CodeInvalidRequest,
			"give exactly one of \"orderId\" and \"clientOrderId\" to name the order to wait for")
	}
	target := orderTarget{orderID: p.OrderID, clientOrderID: p.ClientOrderID}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(p.TimeoutSeconds)*time.Second)
	defer cancel()
	// The client hanging up ends the wait; the request's deadline does not.
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	defer stop()

	types := []contract.EventType{contract.EventOrder}
	cur, err := s.eventLog.Follow(wctx, sub.cred.Exchange, sub.cred.ID, types, events.Where{})
	if err != nil {
		return contract.WaitForOrderResult{}, s.eventsUnavailable(ctx, err)
	}
	defer cur.Close()
	defer s.interest.add(wctx, sub.cred.Exchange, sub.cred.ID)()
	last, err := s.latestOrder(wctx, sub, target, cur.Last)
	if err != nil {
		return contract.WaitForOrderResult{}, s.eventsUnavailable(ctx, err)
	}
	if last != nil && reached(p.Until, last, true) {
		return contract.WaitForOrderResult{Order: last, Reached: true}, nil
	}
	for {
		ev, err := cur.Next(wctx)
		if err != nil {
			if wctx.Err() == nil {
				return contract.WaitForOrderResult{}, s.eventsUnavailable(ctx, err)
			}
			if last == nil {
				return contract.WaitForOrderResult{}, contract.Upstream(contract.ReasonOrderNotFound, "", "",
					"no event of order %s arrived within %d s, and none is kept from the last %s; check the id (and the credential)",
					target, p.TimeoutSeconds, s.cfg.EventRetention)
			}
			return contract.WaitForOrderResult{Order: last, Reached: false}, nil
		}
		var o contract.OrderEvent
		if json.Unmarshal(ev.Data, &o) != nil || !target.matches(&o) || !sub.wants(&ev) {
			continue
		}
		last = &o
		if reached(p.Until, last, false) {
			return contract.WaitForOrderResult{Order: last, Reached: true}, nil
		}
	}
}

func (t orderTarget) String() string {
	if t.orderID != "" {
		return t.orderID
	}
	return "with clientOrderId " + t.clientOrderID
}

// recentWindow is how many of the stream's newest events latestOrder
// looks through first: a wait is mostly for an order placed moments ago.
const recentWindow = 5000

// latestOrder is the target's last state among the kept order events up to
// sequence upTo, nil when there is none. It reads the newest events first
// and the older ones only when the order is not among them.
func (s *Server) latestOrder(ctx context.Context, sub *subscription, t orderTarget, upTo uint64) (*contract.OrderEvent, error) {
	var split events.Where // from the oldest kept
	if upTo > recentWindow {
		split = events.Where{After: upTo - recentWindow, HasAfter: true}
		if o, err := s.scanOrders(ctx, sub, t, split, upTo); o != nil || err != nil {
			return o, err
		}
		return s.scanOrders(ctx, sub, t, events.Where{}, split.After)
	}
	return s.scanOrders(ctx, sub, t, split, upTo)
}

// scanOrders is the target's last state among the credential's order
// events after from, up to sequence upTo.
func (s *Server) scanOrders(ctx context.Context, sub *subscription, t orderTarget, from events.Where, upTo uint64) (*contract.OrderEvent, error) {
	var last *contract.OrderEvent
	where := from
	for {
		page, err := s.eventLog.Read(ctx, sub.cred.Exchange, sub.cred.ID, []contract.EventType{contract.EventOrder}, where, contract.MaxEventsPage)
		if err != nil || page.Reset {
			return last, err
		}
		for i := range page.Events {
			ev := &page.Events[i]
			if seq, _, _ := events.ParseID(ev.ID); seq > upTo {
				return last, nil
			}
			var o contract.OrderEvent
			if json.Unmarshal(ev.Data, &o) == nil && t.matches(&o) && sub.wants(ev) {
				last = &o
			}
		}
		next, _, _ := events.ParseID(page.Next)
		if len(page.Events) < contract.MaxEventsPage || next >= upTo {
			return last, nil
		}
		where = events.Where{After: next, HasAfter: true}
	}
}
