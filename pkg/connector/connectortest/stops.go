package connectortest

import (
	"context"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// StopVenue is one venue's simulator under the shared stop table: a
// replica serving its adapter, a market with a clock that stands still,
// and a way to move the simulator's mark.
type StopVenue struct {
	Replica *Replica
	Market  string          // canonical, e.g. BTC-USDT-PERP
	Size    string          // an order size the market takes at Mark
	Mark    decimal.Decimal // where the mark starts each case
	Step    decimal.Decimal // the trigger's distance from the mark, a multiple of the tick
	// SetMark moves the simulator's mark price (and fires what it crosses).
	SetMark func(t testing.TB, mark decimal.Decimal)
}

// stopCases is DESIGN §13's definition of a stop, once for every venue: a
// trigger above the mark fires on the way up and one below on the way
// down, for either side; a trigger on the mark is refused.
var stopCases = []struct {
	name  string
	side  contract.Side
	above int // the trigger is Step above (1) or below (-1) the mark, or on it (0)
}{
	{name: "buy above the mark fires rising", side: contract.Buy, above: 1},
	{name: "buy below the mark fires falling", side: contract.Buy, above: -1},
	{name: "sell above the mark fires rising", side: contract.Sell, above: 1},
	{name: "sell below the mark fires falling", side: contract.Sell, above: -1},
	{name: "buy on the mark is refused", side: contract.Buy, above: 0},
	{name: "sell on the mark is refused", side: contract.Sell, above: 0},
}

// RunStopDirection places each case's stop through the runtime, moves the
// mark away from the trigger (the stop must wait), then through it (the
// stop must fire and open a position on its side).
func RunStopDirection(t *testing.T, v StopVenue) {
	for _, tc := range stopCases {
		t.Run(tc.name, func(t *testing.T) {
			v.SetMark(t, v.Mark)
			t.Cleanup(func() { v.flatten(t) })
			dir := v.Step.Mul(decimal.NewFromInt(int64(tc.above)))
			trigger := v.Mark.Add(dir)
			var res contract.StopOrderResult
			err := v.call(contract.OpPlaceStopOrder, map[string]any{"market": v.Market, "side": tc.side, "size": v.Size,
				"triggerPrice": trigger, "reduceOnly": false}, &res)
			if tc.above == 0 {
				ce, ok := contract.AsError(err)
				if !ok || ce.Code != contract.CodeInvalidRequest {
					t.Fatalf("stop on the mark: got %v (%+v), want INVALID_REQUEST", err, res)
				}
				return
			}
			if err != nil {
				t.Fatalf("placeStopOrder %s trigger %s at mark %s: %v", tc.side, trigger, v.Mark, err)
			}
			if res.Status != contract.StatusPending {
				t.Fatalf("placeStopOrder status %s, want PENDING", res.Status)
			}
			v.SetMark(t, v.Mark.Sub(dir.Mul(decimal.NewFromInt(2))))
			if p := v.position(t); p != nil {
				t.Fatalf("the stop fired as the mark moved away from its trigger %s: position %+v", trigger, *p)
			}
			v.SetMark(t, trigger.Add(dir))
			want := contract.Long
			if tc.side == contract.Sell {
				want = contract.Short
			}
			Eventually(t, 5*time.Second, "the stop fires when the mark crosses "+trigger.String(), func() bool {
				p := v.position(t)
				return p != nil && p.Side == want
			})
		})
	}
}

func (v StopVenue) call(op string, params, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return v.Replica.Call(ctx, op, params, out)
}

// position is the open position in the venue's market, nil when flat.
func (v StopVenue) position(t testing.TB) *contract.Position {
	t.Helper()
	var res contract.PositionsResult
	if err := v.call(contract.OpGetPositions, map[string]any{"market": v.Market}, &res); err != nil {
		t.Fatalf("getPositions: %v", err)
	}
	for _, p := range res.Positions {
		if p.Size.IsPositive() {
			return &p
		}
	}
	return nil
}

// flatten cancels what is left of a case and closes what it opened.
func (v StopVenue) flatten(t testing.TB) {
	t.Helper()
	if err := v.call(contract.OpCancelAllOrders, map[string]any{"market": v.Market}, &contract.CancelAllResult{}); err != nil {
		t.Errorf("cancelAllOrders: %v", err)
	}
	if v.position(t) == nil {
		return
	}
	if err := v.call(contract.OpCloseAllPositions, map[string]any{"market": v.Market}, &contract.CloseAllResult{}); err != nil {
		t.Errorf("closeAllPositions: %v", err)
	}
}

// ServeREST serves a through the runtime on an embedded NATS with the
// market-data stream off, so every mark the runtime reads is the venue's
// current one.
func ServeREST(t testing.TB, a connector.Adapter, env contract.Environment, secret contract.Secret) *Replica {
	t.Helper()
	return Serve(t, a, Options{URL: testenv.EmbeddedNATS(t).ClientURL(), Subjects: contract.NewSubjects(testenv.Prefix(t)),
		Env: env, Secret: secret, Stream: connector.StreamConfig{Disabled: true}})
}

// OnEngine is the stop table's venue for a simulator built on a paper
// engine: market (canonical) is symbol on e, traded 0.01 at a time with
// triggers 100 from a mark that starts each case at mark.
func OnEngine(r *Replica, e *paper.Engine, market, symbol, mark string) StopVenue {
	return StopVenue{Replica: r, Market: market, Size: "0.01", Mark: decimal.RequireFromString(mark), Step: decimal.NewFromInt(100),
		SetMark: func(t testing.TB, mark decimal.Decimal) {
			t.Helper()
			if _, err := e.SetMarkPrice(symbol, mark); err != nil {
				t.Fatal(err)
			}
		}}
}
