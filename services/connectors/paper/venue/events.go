package venue

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// TickEvery is how often the venue moves its engine's clock while it
// publishes events, so resting orders fill and stops fire on time even
// when no request comes in (the walk steps once a second).
const TickEvery = 200 * time.Millisecond

// PublishEvents sends every account change of e to pub (the paper account
// of a credential is the credential id) and ticks the engine, until stop
// is called. The venue publishes its own events: it is the one place they
// happen, in the order they happen. With last set (the stream's newest
// event of a credential and type), it first publishes what the stream
// lacks (Reconcile): events queued when the venue last stopped are gone.
func PublishEvents(e *paper.Engine, pub *events.Publisher, last LastEvent, log *slog.Logger) (stop func()) {
	r := &relay{pub: pub, holding: last != nil}
	e.OnEvent(r.sink)
	if last != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		n, err := Reconcile(ctx, e, pub, last)
		cancel()
		if err != nil {
			log.Warn("account events not reconciled", "err", err)
		} else if n > 0 {
			log.Info("account events reconciled", "events", n)
		}
		r.release()
	}
	return tick(e)
}

// tick moves e's clock every TickEvery until stop is called, which also
// detaches e's event sink.
func tick(e *paper.Engine) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(TickEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				e.Tick()
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		e.OnEvent(nil)
	}
}

// relay hands engine events to the publisher; while a reconcile runs it
// holds them, so what the reconcile finds missing goes out first.
type relay struct {
	pub     *events.Publisher
	mu      sync.Mutex
	holding bool
	held    []events.Outgoing
}

func (r *relay) sink(ev paper.Event) {
	out, ok := outgoing(ev)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holding {
		r.held = append(r.held, out)
		return
	}
	r.pub.Publish(out)
}

func (r *relay) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, out := range r.held {
		r.pub.Publish(out)
	}
	r.held, r.holding = nil, false
}

// outgoing is ev in the contract's shape.
func outgoing(ev paper.Event) (events.Outgoing, bool) {
	data, ok := EventData(ev)
	if !ok {
		return events.Outgoing{}, false
	}
	return events.New(contract.Paper, ev.Account, contract.SourceStream, ev.Time, data), true
}

func ptr(d decimal.Decimal) *decimal.Decimal { return &d }

func positive(d decimal.Decimal) *decimal.Decimal {
	if d.IsPositive() {
		return &d
	}
	return nil
}

func orderEvent(o paper.Order) contract.OrderEvent {
	return contract.OrderEvent{
		OrderID: o.ID, ClientOrderID: o.ClientOrderID, Market: o.Market, Side: contract.Side(o.Side), Type: string(o.Type),
		Size: o.Size, Price: positive(o.Price), TriggerPrice: positive(o.TriggerPrice), FilledSize: o.FilledSize,
		AvgPrice: positive(o.AvgFillPrice), Status: string(o.Status), ReduceOnly: o.ReduceOnly, Reason: o.Reason,
	}
}

func fillEvent(f paper.Fill) contract.FillEvent {
	return contract.FillEvent{
		FillID: f.ID, OrderID: f.OrderID, ClientOrderID: f.ClientOrderID, Market: f.Market, Side: contract.Side(f.Side),
		Size: f.Size, Price: f.Price, Fee: f.Fee, FeeAsset: "USD", Liquidity: string(f.Liquidity),
		RealizedPnl: ptr(f.RealizedPnL), Timestamp: f.Time.Unix(),
	}
}

func positionEvent(p paper.Position) contract.PositionEvent {
	out := contract.PositionEvent{Market: p.Market, Side: contract.PositionSide(p.Side), Size: p.Size, EntryPrice: p.EntryPrice}
	if p.Side != paper.Flat {
		out.UnrealizedPnl = ptr(p.UnrealizedPnL)
	}
	if p.Leverage > 0 {
		out.Leverage = ptr(decimal.NewFromInt(int64(p.Leverage)))
	}
	return out
}

func balanceEvent(b paper.Balance) contract.BalanceEvent {
	return contract.BalanceEvent{Asset: "USD", Equity: ptr(b.Equity), FreeCollateral: ptr(b.FreeCollateral), WalletBalance: ptr(b.Wallet)}
}
