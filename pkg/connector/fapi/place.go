package fapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Placer places limit and market orders on New Order; the connector gives
// its endpoints and its quirks.
type Placer struct {
	Errors      Errors
	Signed      Signed
	Prefix      string // the REST paths' version, /fapi/v1 or /fapi/v3
	Weight      int    // New Order's weight
	ByOrderID   bool   // Account Trade List filters by orderId (Binance); else by symbol only
	AnswerPrice bool   // the RESULT answer's avgPrice is the fill price (Aster); else Query Order's
	CheckID     func(id string) error
	OneWay      func(ctx context.Context, c connector.Credential) error
	ForgetMode  func(c connector.Credential)
	Meta        func(c connector.Credential, native string) SymbolMeta
	Wait        func(ctx context.Context, d time.Duration) error
	Now         func() time.Time
	// Conditional places one conditional order on the mark price: typ
	// STOP_MARKET or TAKE_PROFIT_MARKET, o.TriggerPrice its trigger.
	Conditional func(ctx context.Context, c connector.Credential, o connector.OrderRequest, typ string) (contract.StopOrderResult, error)
	// Cancel cancels an order the connector handed out (a protection leg).
	Cancel func(ctx context.Context, c connector.Credential, id string, m *connector.Market) error
	// AmendID reads the id of an order Modify Order can take.
	AmendID func(id string) (int64, error)
	// Leverage reads the leverage by symbol, of one market or (m nil)
	// all; nil when positionRisk carries it.
	Leverage func(ctx context.Context, c connector.Credential, m *connector.Market) (map[string]int, error)
	// FindOther finds by client id what Query Order does not know (-2013)
	// in the venue's other order service; nil when it has none.
	FindOther func(ctx context.Context, c connector.Credential, clientID string) (connector.FoundOrder, bool, error)
}

// Place sends a regular order and returns the venue's final answer
// (newOrderRespType=RESULT). -4061 means the position mode changed
// under us: the cache is dropped so the next order asks again.
func (p *Placer) Place(ctx context.Context, c connector.Credential, q connector.Query) (Order, error) {
	var res Order
	err := p.Signed(ctx, c, http.MethodPost, p.Prefix+"/order", q.Add("newOrderRespType", "RESULT"), p.Weight, &res)
	if IsCode(err, -4061) {
		p.ForgetMode(c)
		if ce, ok := contract.AsError(err); ok {
			ce.Message += "; the account seems to have switched to hedge position mode, which perpgate does not trade: switch it back to One-way"
		}
	}
	return res, err
}

// PlaceLimitOrder implements connector.Adapter.
func (p *Placer) PlaceLimitOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.LimitOrderResult, error) {
	if err := p.CheckID(o.ClientOrderID); err != nil {
		return contract.LimitOrderResult{}, err
	}
	if err := p.OneWay(ctx, c); err != nil {
		return contract.LimitOrderResult{}, err
	}
	res, err := p.Place(ctx, c, LimitParams(o))
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	if err := p.Errors.PostOnlyExpired(o, res); err != nil {
		return contract.LimitOrderResult{}, err
	}
	return LimitResult(o, res), nil
}

// PlaceMarketOrder implements connector.Adapter. No order answer carries
// the fee: fill price, size and fee come from the order's trades (FillOf).
func (p *Placer) PlaceMarketOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.MarketOrderResult, error) {
	if err := p.CheckID(o.ClientOrderID); err != nil {
		return contract.MarketOrderResult{}, err
	}
	size, err := MarketSize(p.Meta(c, o.Market.Native), o.Market, o.Size)
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	if err := p.OneWay(ctx, c); err != nil {
		return contract.MarketOrderResult{}, err
	}
	res, err := p.Place(ctx, c, MarketParams(o, size))
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	out := contract.MarketOrderResult{OrderID: strconv.FormatInt(int64(res.OrderID), 10), Market: o.Market.Native, Side: o.Side,
		FilledPrice: decimal.Zero, FilledSize: decimal.Zero, Fee: decimal.Zero}
	if err := p.Errors.Unfilled(res); err != nil {
		return out, err
	}
	f, err := p.FillOf(ctx, c, o.Market, res)
	if err != nil {
		// The order stands: report it with what the answer says rather
		// than fail a placement that happened (a retry would place again).
		out.FilledSize = res.ExecutedQty
		if p.AnswerPrice {
			out.FilledPrice = res.AvgPrice
		}
		return out, nil
	}
	out.FilledSize, out.FilledPrice, out.Fee = f.Size, f.Price(o.Market), f.Fee
	return out, nil
}

// TradeWaits are the pauses before each read of an order's trades: the
// trade list can trail the order answer by a moment.
var TradeWaits = []time.Duration{0, 100 * time.Millisecond, 400 * time.Millisecond}

// FillOf reads what a placed order executed from its trades: size,
// notional and the fee. While the trades account for less than the
// answer's executedQty they are read again (TradeWaits); when they never
// catch up, the size is executedQty at avgPrice (avgOf), and the fee
// counts the trades seen.
func (p *Placer) FillOf(ctx context.Context, c connector.Credential, m connector.Market, res Order) (connector.Execution, error) {
	id := strconv.FormatInt(int64(res.OrderID), 10)
	q := SymbolParam(m)
	if p.ByOrderID {
		q = q.Add("orderId", id)
	}
	var f connector.Execution
	for _, d := range TradeWaits {
		if d > 0 {
			if err := p.Wait(ctx, d); err != nil {
				return f, err
			}
		}
		var trades []UserTrade
		if err := p.Signed(ctx, c, http.MethodGet, p.Prefix+"/userTrades", q.Add("limit", "1000"), 5, &trades); err != nil {
			return f, err
		}
		f = connector.NewExecution()
		for _, t := range trades {
			if t.OrderID == res.OrderID {
				f = f.Add(t.Qty, t.Price, t.Commission)
			}
		}
		if f.Size.IsPositive() && f.Size.GreaterThanOrEqual(res.ExecutedQty) {
			return f, nil
		}
	}
	if !res.ExecutedQty.IsPositive() {
		return f, nil
	}
	avg, err := p.avgOf(ctx, c, m, res, id)
	if err != nil {
		return f, err
	}
	f.Size, f.Notional = res.ExecutedQty, res.ExecutedQty.Mul(avg)
	return f, nil
}

// avgOf is the order's average price: the answer's, or Query Order's.
func (p *Placer) avgOf(ctx context.Context, c connector.Credential, m connector.Market, res Order, id string) (decimal.Decimal, error) {
	if p.AnswerPrice {
		return res.AvgPrice, nil
	}
	var q Order
	err := p.Signed(ctx, c, http.MethodGet, p.Prefix+"/order", SymbolParam(m).Add("orderId", id), 1, &q)
	return q.AvgPrice, err
}
