package paper

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
	"github.com/shopspring/decimal"
)

func marketFromVenue(m venue.MarketInfo) connector.Market {
	return connector.Market{
		Canonical:   m.Symbol,
		Native:      m.Symbol,
		Base:        m.Base,
		Quote:       m.Quote,
		Multiplier:  1,
		TickSize:    m.TickSize,
		LotSize:     m.LotSize,
		MinNotional: m.MinNotional,
		// The paper engine applies its minimum to orders that are not reduce-only.
		ReduceOnlyBelowMinNotional: true,
		MaxLeverage:                m.MaxLeverage,
	}
}

func levelsFromVenue(in [][2]decimal.Decimal) []contract.Level {
	out := make([]contract.Level, len(in))
	for i, l := range in {
		out[i] = contract.Level(l)
	}
	return out
}

func positionFromVenue(p venue.Position) contract.Position {
	return contract.Position{
		Market:        p.Market,
		Side:          contract.PositionSide(p.Side),
		Size:          p.Size,
		EntryPrice:    p.EntryPrice,
		MarkPrice:     p.MarkPrice,
		UnrealizedPnl: p.UnrealizedPnl,
		Leverage:      decimal.NewFromInt(int64(p.Leverage)),
	}
}

// orderFromVenue reports a stop's trigger as its price too: a stop has no
// limit price, and the trigger is the price that matters to the client.
func orderFromVenue(o venue.Order) contract.Order {
	out := contract.Order{
		ID:            o.ID,
		Market:        o.Market,
		Side:          contract.Side(o.Side),
		Type:          o.Type,
		Size:          o.Size,
		Price:         o.Price,
		FilledSize:    o.FilledSize,
		Status:        o.Status,
		CreatedAt:     o.CreatedAt,
		ReduceOnly:    o.ReduceOnly,
		ClientOrderID: o.ClientOrderID,
	}
	if o.TriggerPrice.IsPositive() {
		t := o.TriggerPrice
		out.TriggerPrice = &t
		if !out.Price.IsPositive() {
			out.Price = t
		}
	}
	return out
}

func orderToVenue(o connector.OrderRequest, typ string) venue.OrderRequest {
	return venue.OrderRequest{
		Market:        o.Market.Native,
		Side:          string(o.Side),
		Type:          typ,
		Size:          o.Size,
		Price:         o.Price,
		TriggerPrice:  o.TriggerPrice,
		PostOnly:      o.PostOnly,
		ReduceOnly:    o.ReduceOnly,
		ClientOrderID: o.ClientOrderID,
	}
}
