package venue

import (
	"context"
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
// of a credential is the credential id) and ticks the engine until ctx
// ends. The venue publishes its own events: it is the one place they
// happen, in the order they happen.
func PublishEvents(ctx context.Context, e *paper.Engine, pub *events.Publisher) {
	e.OnEvent(func(ev paper.Event) {
		if out, ok := outgoing(ev); ok {
			pub.Publish(out)
		}
	})
	go func() {
		t := time.NewTicker(TickEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				e.OnEvent(nil)
				return
			case <-t.C:
				e.Tick()
			}
		}
	}()
}

// outgoing is ev in the contract's shape.
func outgoing(ev paper.Event) (events.Outgoing, bool) {
	var data any
	switch ev.Kind {
	case paper.EventOrder:
		data = orderEvent(*ev.Order)
	case paper.EventFill:
		data = fillEvent(*ev.Fill)
	case paper.EventPosition:
		data = positionEvent(*ev.Position)
	case paper.EventBalance:
		b := ev.Balance
		data = contract.BalanceEvent{Asset: "USD", Equity: ptr(b.Equity), FreeCollateral: ptr(b.FreeCollateral), WalletBalance: ptr(b.Wallet)}
	case paper.EventFunding:
		f := ev.Funding
		data = contract.FundingEvent{Market: f.Market, Amount: f.Amount, Rate: ptr(f.Rate), PositionSize: ptr(f.PositionSize)}
	default:
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
