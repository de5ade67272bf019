package paradex

import (
	"encoding/json"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// accountEvent normalizes one private channel message; the payloads are
// the REST models, read as REST reads them.
func accountEvent(channel string, data json.RawMessage) (connector.AccountEvent, bool) {
	prefix, _, _ := strings.Cut(channel, ".")
	switch prefix {
	case "orders":
		var o wsOrder
		if json.Unmarshal(data, &o) != nil {
			return connector.AccountEvent{}, false
		}
		return connector.AccountEvent{Time: ms(o.LastUpdatedAt), Data: orderEvent(o)}, true
	case "fills":
		var f fillResp
		if json.Unmarshal(data, &f) != nil || f.FillType == "TRANSFER" || f.FillType == "SETTLE_MARKET" {
			return connector.AccountEvent{}, false // not trades, as getFills leaves them out
		}
		return connector.AccountEvent{Time: ms(f.CreatedAt), Data: fillEvent(f)}, true
	case "positions":
		var p wsPosition
		if json.Unmarshal(data, &p) != nil {
			return connector.AccountEvent{}, false
		}
		return connector.AccountEvent{Time: ms(p.LastUpdatedAt), Data: positionEvent(p)}, true
	case "account":
		var r wsAccount
		if json.Unmarshal(data, &r) != nil {
			return connector.AccountEvent{}, false
		}
		asset := r.SettlementAsset
		if asset == "" {
			asset = "USDC"
		}
		return connector.AccountEvent{Time: ms(r.UpdatedAt), Data: contract.BalanceEvent{Asset: asset,
			Equity: venuekit.Given(r.AccountValue), FreeCollateral: venuekit.Given(r.FreeCollateral), WalletBalance: venuekit.Given(r.TotalCollateral)}}, true
	case "funding_payments":
		var p struct {
			Market    string        `json:"market"`
			Payment   dec           `json:"payment"` // signed: negative when paid
			CreatedAt connector.Int `json:"created_at"`
		}
		if json.Unmarshal(data, &p) != nil || !p.Payment.Given {
			return connector.AccountEvent{}, false
		}
		// Paradex gives neither the rate nor the position size.
		return connector.AccountEvent{Time: ms(p.CreatedAt), Data: contract.FundingEvent{Market: p.Market, Amount: p.Payment.D()}}, true
	}
	return connector.AccountEvent{}, false
}

type wsOrder struct {
	orderResp
	LastUpdatedAt connector.Int `json:"last_updated_at"`
}

type wsPosition struct {
	positionResp
	LiquidationPrice dec           `json:"liquidation_price"`
	LastUpdatedAt    connector.Int `json:"last_updated_at"`
}

type wsAccount struct {
	accountResp
	SettlementAsset string        `json:"settlement_asset"`
	UpdatedAt       connector.Int `json:"updated_at"`
}

// orderEvent: status as REST maps it; price only for priced types;
// avgPrice when something filled; reason the venue's cancel_reason when
// the order was not simply cancelled by its owner or filled (a post-only
// refusal is post_only_would_take, as on every venue).
func orderEvent(w wsOrder) contract.OrderEvent {
	o := orderFromWire(w.orderResp)
	ev := venuekit.OrderEvent(o)
	ev.Price = venuekit.Positive(w.Price.D())
	if w.AvgFillPrice.Given && o.FilledSize.IsPositive() {
		ev.AvgPrice = venuekit.Positive(w.AvgFillPrice.D())
	}
	if r := w.CancelReason; r != "" && r != "USER_CANCELED" && o.Status != contract.StatusFilled {
		ev.Reason = r
		if r == "POST_ONLY_WOULD_CROSS" { // the name every venue's post-only refusal has (DESIGN §13)
			ev.Reason = "post_only_would_take"
		}
	}
	return ev
}

func fillEvent(f fillResp) contract.FillEvent {
	ev := venuekit.FillEvent(fillFromWire(f), f.FeeCurrency, f.Liquidity)
	ev.ClientOrderID = f.ClientID
	return ev
}

// positionEvent: a CLOSED or empty position is FLAT; leverage and the
// liquidation price only when Paradex gave them.
func positionEvent(p wsPosition) contract.PositionEvent {
	if p.Status == "CLOSED" || p.Size.D().IsZero() {
		return venuekit.FlatEvent(p.Market)
	}
	return venuekit.PositionEvent(positionFromWire(p.positionResp, decimal.Zero), venuekit.Given(p.UnrealizedPnl),
		venuekit.Positive(p.LiquidationPrice.D()))
}
