package venue

import (
	"context"
	"encoding/json"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/pkg/paper"
)

// LastEvent returns a credential's newest event of a type in the stream,
// nil when there is none (events.Reader.Last).
type LastEvent func(ctx context.Context, x contract.Exchange, cred string, t contract.EventType) (*contract.Event, error)

// reconcileWindow bounds how far back a credential with no fill in the
// stream is reconciled: its fills in the stream's retention would be the
// right bound, but a stream that is new is not missing a day of fills.
const reconcileWindow = 24 * time.Hour

// Reconcile publishes, with source "reconcile", what the stream lacks of
// every account: the fills after the newest fill in the stream, the
// orders changed since the newest order event, and the positions and
// balance those fills moved. Fills are deduplicated by fill id and order
// states by (id, status, filledSize), so what the stream has already is
// stored once. It returns how many events it queued.
func Reconcile(ctx context.Context, e *paper.Engine, pub *events.Publisher, last LastEvent) (int, error) {
	n := 0
	for _, cred := range e.Accounts() {
		k, err := reconcileAccount(ctx, e, pub, last, cred)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

func reconcileAccount(ctx context.Context, e *paper.Engine, pub *events.Publisher, last LastEvent, cred string) (int, error) {
	lastFill, err := last(ctx, contract.Paper, cred, contract.EventFill)
	if err != nil {
		return 0, err
	}
	lastOrder, err := last(ctx, contract.Paper, cred, contract.EventOrder)
	if err != nil {
		return 0, err
	}
	missing, err := missingFills(e, cred, lastFill)
	if err != nil {
		return 0, err
	}
	since := e.Now().Add(-reconcileWindow)
	var known *contract.OrderEvent
	if lastOrder != nil {
		since = time.UnixMilli(lastOrder.Time)
		known = orderOf(lastOrder)
	}
	orders, err := e.OrdersUpdatedSince(cred, since)
	if err != nil {
		return 0, err
	}
	publish := func(t time.Time, data any) {
		out := events.New(contract.Paper, cred, contract.SourceReconcile, t, data)
		pub.Publish(out)
	}
	n := 0
	touched := map[string]bool{}
	for _, f := range missing {
		publish(f.Time, fillEvent(f))
		touched[f.Market] = true
		n++
	}
	for _, o := range orders {
		ev := orderEvent(o)
		if known != nil && ev.OrderID == known.OrderID && ev.Status == known.Status && ev.FilledSize.Equal(known.FilledSize) {
			continue // the stream's newest order event
		}
		publish(o.UpdatedAt, ev)
		n++
	}
	if len(touched) == 0 {
		return n, nil
	}
	positions, err := e.Positions(cred, "")
	if err != nil {
		return n, err
	}
	open := map[string]paper.Position{}
	for _, p := range positions {
		open[p.Market] = p
	}
	now := e.Now()
	for market := range touched {
		p, ok := open[market]
		if !ok {
			p = paper.Position{Market: market, Side: paper.Flat}
		}
		publish(now, positionEvent(p))
		n++
	}
	b, err := e.Balance(cred)
	if err != nil {
		return n, err
	}
	publish(now, balanceEvent(b))
	return n + 1, nil
}

// missingFills are the account's fills after the stream's newest one,
// oldest first; with none in the stream, those of the reconcile window.
func missingFills(e *paper.Engine, cred string, lastFill *contract.Event) ([]paper.Fill, error) {
	fills, err := e.Fills(cred, "", 1<<30) // newest first, all remembered
	if err != nil {
		return nil, err
	}
	// Fills are newest first; those before the stream's newest fill (by
	// time, then by id) are in the stream already.
	var lastID string
	cutoff := e.Now().Add(-reconcileWindow)
	if lastFill != nil {
		if f := fillOf(lastFill); f != nil {
			lastID, cutoff = f.FillID, time.UnixMilli(lastFill.Time)
		}
	}
	var out []paper.Fill
	for _, f := range fills {
		if f.ID == lastID || f.Time.Before(cutoff) {
			break
		}
		out = append(out, f)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

func orderOf(ev *contract.Event) *contract.OrderEvent {
	var o contract.OrderEvent
	if json.Unmarshal(ev.Data, &o) != nil {
		return nil
	}
	return &o
}

func fillOf(ev *contract.Event) *contract.FillEvent {
	var f contract.FillEvent
	if json.Unmarshal(ev.Data, &f) != nil {
		return nil
	}
	return &f
}
