package paper_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
)

// recorder keeps the engine's events.
type recorder struct {
	mu  sync.Mutex
	evs []paper.Event
}

func record(e *paper.Engine) *recorder {
	r := &recorder{}
	e.OnEvent(func(ev paper.Event) {
		r.mu.Lock()
		r.evs = append(r.evs, ev)
		r.mu.Unlock()
	})
	return r
}

// take returns the events so far, one line each, and forgets them.
func (r *recorder) take() ([]paper.Event, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.evs
	r.evs = nil
	var lines []string
	for _, ev := range evs {
		lines = append(lines, describe(ev))
	}
	return evs, strings.Join(lines, "\n")
}

func describe(ev paper.Event) string {
	switch ev.Kind {
	case paper.EventOrder:
		return fmt.Sprintf("order %s %s %s filled %s", ev.Order.ID, ev.Order.Type, ev.Order.Status, ev.Order.FilledSize)
	case paper.EventFill:
		return fmt.Sprintf("fill %s order %s %s", ev.Fill.ID, ev.Fill.OrderID, ev.Fill.Liquidity)
	case paper.EventPosition:
		return fmt.Sprintf("position %s %s %s", ev.Position.Market, ev.Position.Side, ev.Position.Size)
	case paper.EventBalance:
		return "balance"
	case paper.EventFunding:
		return fmt.Sprintf("funding %s %s", ev.Funding.Market, ev.Funding.Amount)
	}
	return string(ev.Kind)
}

func TestEventsFollowAPartlyFilledLimitOrderToItsFill(t *testing.T) {
	e, clock := newEngine(t, time.Hour)
	if _, err := e.EnsureAccount("a", d("100000000")); err != nil {
		t.Fatal(err)
	}
	rec := record(e)
	m, err := e.Market(btc)
	if err != nil {
		t.Fatal(err)
	}
	// One tick above the best ask takes the first level and rests the rest.
	price := m.MarkPrice.Add(m.TickSize)
	o := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: d("100"), Price: price.Add(m.TickSize)})
	if o.Status != paper.Open || !o.FilledSize.IsPositive() {
		t.Fatalf("placement = %s filled %s, want OPEN and partly filled", o.Status, o.FilledSize)
	}
	evs, got := rec.take()
	want := []string{
		"order " + o.ID + " LIMIT OPEN filled 0",
		"fill", "position " + btc + " LONG", "balance",
		"fill", "position " + btc + " LONG", "balance",
		"order " + o.ID + " LIMIT OPEN filled " + o.FilledSize.String(),
	}
	assertShape(t, got, want)
	fill := evs[1].Fill
	if !fill.Fee.IsPositive() || fill.Liquidity != paper.Taker || fill.OrderID != o.ID {
		t.Errorf("first fill = %+v, want a taker fill of %s with a fee", fill, o.ID)
	}

	// The mark falls through the limit: the rest fills as maker.
	clock.Advance(time.Second)
	mustMark(t, e, btc, price.Sub(m.TickSize.Mul(d("50"))).String())
	_, got = rec.take()
	assertShape(t, got, []string{"fill", "position " + btc + " LONG 100", "balance", "order " + o.ID + " LIMIT FILLED filled 100"})

	// A resting order and its cancel.
	far := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Sell, Type: paper.Limit, Size: d("1"), Price: price.Mul(d("2"))})
	if _, err := e.CancelOrder("a", far.ID); err != nil {
		t.Fatal(err)
	}
	_, got = rec.take()
	assertShape(t, got, []string{"order " + far.ID + " LIMIT OPEN filled 0", "order " + far.ID + " LIMIT CANCELLED filled 0"})
}

// assertShape compares event lines by prefix, so ids the engine picks
// (fills) need not be spelt out.
func assertShape(t *testing.T, got string, want []string) {
	t.Helper()
	lines := strings.Split(got, "\n")
	ok := len(lines) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(lines[i], want[i])
	}
	if !ok {
		t.Fatalf("events:\n%s\nwant (prefixes):\n%s", got, strings.Join(want, "\n"))
	}
}

func TestEventsOfAFiredTakeProfitPutTheFillBeforeTheCancelledStop(t *testing.T) {
	e, clock := newEngine(t, time.Hour)
	m, err := e.Market(btc)
	if err != nil {
		t.Fatal(err)
	}
	mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.01")})
	up, down := m.MarkPrice.Add(m.TickSize.Mul(d("100"))), m.MarkPrice.Sub(m.TickSize.Mul(d("100")))
	tp := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Sell, Type: paper.TakeProfitMarket, Size: d("0.01"), TriggerPrice: up, ReduceOnly: true, PositionLinked: true})
	sl := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Sell, Type: paper.StopMarket, Size: d("0.01"), TriggerPrice: down, ReduceOnly: true, PositionLinked: true})
	rec := record(e)
	clock.Advance(time.Second)
	mustMark(t, e, btc, up.Add(m.TickSize).String())
	_, got := rec.take()
	assertShape(t, got, []string{
		"fill", "position " + btc + " FLAT 0", "balance",
		"order " + sl.ID + " STOP_MARKET CANCELLED",
		"order " + tp.ID + " TAKE_PROFIT_MARKET FILLED",
	})
}

func TestEventsCarryFunding(t *testing.T) {
	e, clock := newEngine(t, 8*time.Hour-2*time.Second)
	mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.01")})
	rec := record(e)
	clock.Advance(3 * time.Second)
	e.Tick()
	evs, got := rec.take()
	if !strings.Contains(got, "funding "+btc) {
		t.Fatalf("events across a funding time:\n%s\nwant a funding event", got)
	}
	for _, ev := range evs {
		if ev.Kind == paper.EventFunding && (ev.Funding.PositionSize.String() != "0.01" || ev.Funding.Amount.IsZero()) {
			t.Errorf("funding = %+v, want the 0.01 position and a non-zero amount", ev.Funding)
		}
	}
}
