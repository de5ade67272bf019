package paper

import (
	"context"
	"errors"
	"sync"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
	"github.com/shopspring/decimal"
)

// Adapter implements connector.Adapter on the paper venue. The paper
// account of a credential is the credential id.
type Adapter struct {
	venue *venue.Client
	// ensured remembers accounts whose starting balance was set, so that
	// costs one venue call per credential and replica.
	ensured sync.Map
	local   *paper.Engine // set: the market stream is read in process
	// unlinked: protection legs are not tied to their position at the
	// venue; the gateway's watcher cancels the rest of a pair.
	unlinked bool
	// carries: the venue runs in this process and records claims with
	// its orders (CarryClaims).
	carries bool
}

var (
	_ connector.Adapter        = (*Adapter)(nil)
	_ connector.LeverageReader = (*Adapter)(nil)
)

// NewAdapter returns an adapter talking to the venue client.
func NewAdapter(v *venue.Client) *Adapter { return &Adapter{venue: v} }

// secret is a paper credential's secret: only an optional starting balance.
type secret struct {
	StartingBalance decimal.Decimal `json:"startingBalance"`
}

// account returns the credential's venue account, created with its
// starting balance on first use.
func (a *Adapter) account(ctx context.Context, c connector.Credential) (string, error) {
	if _, ok := a.ensured.Load(c.ID); ok {
		return c.ID, nil
	}
	var s secret
	if len(c.Secret) > 0 {
		if err := c.Secret.Decode(&s); err != nil {
			return "", contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "paper credential secret is not a valid JSON object")
		}
	}
	if _, err := a.venue.EnsureAccount(ctx, c.ID, s.StartingBalance); err != nil {
		return "", mapError(err)
	}
	a.ensured.Store(c.ID, true)
	return c.ID, nil
}

// Exchange implements connector.Adapter.
func (a *Adapter) Exchange() contract.Exchange { return contract.Paper }

// Markets implements connector.Adapter.
func (a *Adapter) Markets(ctx context.Context, _ connector.Credential) ([]connector.Market, error) {
	list, err := a.venue.Markets(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]connector.Market, len(list))
	for i, m := range list {
		out[i] = marketFromVenue(m)
	}
	return out, nil
}

// GetOrderbook implements connector.Adapter.
func (a *Adapter) GetOrderbook(ctx context.Context, _ connector.Credential, m connector.Market, depth int) (contract.OrderbookResult, error) {
	b, err := a.venue.Orderbook(ctx, m.Native, min(depth, 500))
	if err != nil {
		return contract.OrderbookResult{}, mapError(err)
	}
	return contract.OrderbookResult{Bids: levelsFromVenue(b.Bids), Asks: levelsFromVenue(b.Asks)}, nil
}

// GetMarkPrice implements connector.Adapter.
func (a *Adapter) GetMarkPrice(ctx context.Context, _ connector.Credential, m connector.Market) (contract.MarkPriceResult, error) {
	p, err := a.venue.MarkPrice(ctx, m.Native)
	if err != nil {
		return contract.MarkPriceResult{}, mapError(err)
	}
	return contract.MarkPriceResult{MarkPrice: p.MarkPrice, IndexPrice: p.IndexPrice}, nil
}

// GetCandles implements connector.Adapter.
func (a *Adapter) GetCandles(ctx context.Context, _ connector.Credential, m connector.Market, interval, limit int) (contract.CandlesResult, error) {
	cs, err := a.venue.Candles(ctx, m.Native, interval, limit)
	if err != nil {
		return contract.CandlesResult{}, mapError(err)
	}
	out := make([]contract.Candle, len(cs))
	for i, c := range cs {
		out[i] = contract.Candle{Time: c.Time, Open: c.Open, High: c.High, Low: c.Low, Close: c.Close, Volume: c.Volume}
	}
	return contract.CandlesResult{Candles: out}, nil
}

// GetFundingRate implements connector.Adapter.
func (a *Adapter) GetFundingRate(ctx context.Context, _ connector.Credential, m connector.Market) (contract.FundingRateResult, error) {
	f, err := a.venue.Funding(ctx, m.Native)
	if err != nil {
		return contract.FundingRateResult{}, mapError(err)
	}
	return contract.FundingRateResult{FundingRate: f.FundingRate, NextFundingTime: f.NextFundingTime, FundingIntervalHours: int(f.IntervalSeconds / 3600)}, nil
}

// GetMarketsWithFunding implements connector.Adapter.
func (a *Adapter) GetMarketsWithFunding(ctx context.Context, _ connector.Credential) (contract.MarketsResult, error) {
	list, err := a.venue.Markets(ctx)
	if err != nil {
		return contract.MarketsResult{}, mapError(err)
	}
	out := make([]contract.MarketEntry, len(list))
	for i, m := range list {
		out[i] = contract.MarketEntry{Symbol: m.Symbol, MarkPrice: m.MarkPrice, FundingRate: m.FundingRate, OpenInterest: &m.OpenInterest,
			FundingIntervalHours: int(m.FundingIntervalSeconds / 3600)}
	}
	return contract.MarketsResult{Markets: out}, nil
}

// GetFeeInfo implements connector.Adapter.
func (a *Adapter) GetFeeInfo(ctx context.Context, _ connector.Credential, _ connector.Market) (contract.FeeInfoResult, error) {
	f, err := a.venue.Fees(ctx)
	if err != nil {
		return contract.FeeInfoResult{}, mapError(err)
	}
	return contract.FeeInfoResult{MakerFee: f.MakerFeeBps, TakerFee: f.TakerFeeBps}, nil
}

// GetBalance implements connector.Adapter.
func (a *Adapter) GetBalance(ctx context.Context, c connector.Credential) (contract.BalanceResult, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return contract.BalanceResult{}, err
	}
	b, err := a.venue.Balance(ctx, acct)
	if err != nil {
		return contract.BalanceResult{}, mapError(err)
	}
	return contract.BalanceResult{ExchangeType: contract.Paper, Equity: b.Equity, FreeCollateral: b.FreeCollateral, AccountValue: b.AccountValue}, nil
}

// GetPositions implements connector.Adapter.
func (a *Adapter) GetPositions(ctx context.Context, c connector.Credential, m *connector.Market) (contract.PositionsResult, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return contract.PositionsResult{}, err
	}
	ps, err := a.venue.Positions(ctx, acct, native(m))
	if err != nil {
		return contract.PositionsResult{}, mapError(err)
	}
	out := make([]contract.Position, len(ps))
	for i, p := range ps {
		out[i] = positionFromVenue(p)
	}
	return contract.PositionsResult{Positions: out}, nil
}

// GetOrders implements connector.Adapter.
func (a *Adapter) GetOrders(ctx context.Context, c connector.Credential, m *connector.Market) (contract.OrdersResult, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return contract.OrdersResult{}, err
	}
	os, err := a.venue.Orders(ctx, acct, native(m))
	if err != nil {
		return contract.OrdersResult{}, mapError(err)
	}
	out := make([]contract.Order, len(os))
	for i, o := range os {
		out[i] = orderFromVenue(o)
	}
	return contract.OrdersResult{Orders: out}, nil
}

// GetFills implements connector.Adapter.
func (a *Adapter) GetFills(ctx context.Context, c connector.Credential, m connector.Market, limit int) (contract.FillsResult, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return contract.FillsResult{}, err
	}
	fs, err := a.venue.Fills(ctx, acct, m.Native, limit)
	if err != nil {
		return contract.FillsResult{}, mapError(err)
	}
	out := make([]contract.Fill, len(fs))
	for i, f := range fs {
		out[i] = contract.Fill{ID: f.ID, OrderID: f.OrderID, Market: f.Market, Side: contract.Side(f.Side),
			Size: f.Size, Price: f.Price, Fee: f.Fee, Timestamp: f.Timestamp, RealizedPnl: &f.RealizedPnl}
	}
	return contract.FillsResult{Fills: out}, nil
}

// TestCredentials implements connector.Adapter: a paper credential is
// valid when its account answers.
func (a *Adapter) TestCredentials(ctx context.Context, c connector.Credential) (bool, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return false, err
	}
	if _, err := a.venue.Balance(ctx, acct); err != nil {
		return false, mapError(err)
	}
	return true, nil
}

func (a *Adapter) place(ctx context.Context, c connector.Credential, o connector.OrderRequest, typ string) (venue.Order, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return venue.Order{}, err
	}
	placed, err := a.venue.PlaceOrder(ctx, acct, orderToVenue(o, typ))
	return placed, mapError(err)
}

// PlaceLimitOrder implements connector.Adapter.
func (a *Adapter) PlaceLimitOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.LimitOrderResult, error) {
	placed, err := a.place(ctx, c, o, "LIMIT")
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	return contract.LimitOrderResult{OrderID: placed.ID, Market: o.Market.Canonical, Side: o.Side,
		Size: placed.Size, Price: placed.Price, Status: placed.Status}, nil
}

// PlaceMarketOrder implements connector.Adapter.
func (a *Adapter) PlaceMarketOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.MarketOrderResult, error) {
	placed, err := a.place(ctx, c, o, "MARKET")
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	return contract.MarketOrderResult{OrderID: placed.ID, Market: o.Market.Canonical, Side: o.Side,
		FilledPrice: placed.AvgFillPrice, FilledSize: placed.FilledSize, Fee: placed.Fee}, nil
}

// PlaceStopOrder implements connector.Adapter. The engine's STOP_MARKET
// fires against the side (a buy rising) and TAKE_PROFIT_MARKET with it, so
// the type follows the trigger's side of the mark (DESIGN §13).
func (a *Adapter) PlaceStopOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.StopOrderResult, error) {
	typ := "TAKE_PROFIT_MARKET"
	if o.StopAgainstSide() {
		typ = "STOP_MARKET"
	}
	placed, err := a.place(ctx, c, o, typ)
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	return contract.StopOrderResult{OrderID: placed.ID, Status: placed.Status, TriggerPrice: placed.TriggerPrice}, nil
}

// PlaceBatchOrder implements connector.Adapter. The paper venue has no
// batch call: orders go one by one, in request order, each standing alone.
func (a *Adapter) PlaceBatchOrder(ctx context.Context, c connector.Credential, orders []connector.OrderRequest) ([]contract.BatchOrderResult, error) {
	out := make([]contract.BatchOrderResult, len(orders))
	for i, o := range orders {
		placed, err := a.place(ctx, c, o, "LIMIT")
		if err != nil {
			ce, ok := contract.AsError(err)
			if !ok || ce.Reason == contract.ReasonUpstreamUnavailable {
				return nil, err
			}
			out[i] = contract.BatchOrderResult{Status: contract.StatusRejected, ClientOrderID: o.ClientOrderID, Error: ce}
			continue
		}
		out[i] = contract.BatchOrderResult{OrderID: placed.ID, Status: placed.Status, ClientOrderID: o.ClientOrderID}
	}
	return out, nil
}

// CarryClaims declares that the venue client reaches a venue handler in
// this process (venue.InProcessClient), which records a placement's
// idempotency claim in the order's journal record: a placement then waits
// for one durable write instead of two in a row. Never for a venue over
// the network, which acts on the order before the caller could.
func (a *Adapter) CarryClaims() *Adapter {
	a.carries = true
	return a
}

// CarriesClaims implements connector.ClaimCarrier.
func (a *Adapter) CarriesClaims() bool { return a.carries }

// LinksProtection implements connector.ProtectionLinker: the paper venue
// cancels a protection pair's legs when their position closes, so a fired
// take-profit takes its stop-loss with it.
func (a *Adapter) LinksProtection() bool { return !a.unlinked }

// UnlinkProtection makes the adapter place protection legs the venue does
// not link (PERPGATE_PAPER_LINKED_PROTECTION=off).
func (a *Adapter) UnlinkProtection() *Adapter {
	a.unlinked = true
	return a
}

// PlaceProtectionOrders implements connector.Adapter: a take-profit and a
// stop-loss, both reduce-only and triggered on mark, linked to the position.
func (a *Adapter) PlaceProtectionOrders(ctx context.Context, c connector.Credential, p connector.ProtectionRequest) (contract.ProtectionResult, error) {
	side := contract.Sell
	if p.PositionSide == contract.Short {
		side = contract.Buy
	}
	var res contract.ProtectionResult
	leg := func(trigger *decimal.Decimal, typ, suffix string) (string, error) {
		if trigger == nil {
			return "", nil
		}
		o := connector.OrderRequest{Market: p.Market, Side: side, Size: p.Size, TriggerPrice: *trigger,
			ReduceOnly: true, ClientOrderID: p.ClientOrderID + suffix}
		acct, err := a.account(ctx, c)
		if err != nil {
			return "", err
		}
		req := orderToVenue(o, typ)
		req.PositionLinked = !a.unlinked // the venue cancels the pair when the position closes
		placed, err := a.venue.PlaceOrder(ctx, acct, req)
		return placed.ID, mapError(err)
	}
	var err error
	if res.TPOrderID, err = leg(p.TakeProfit, "TAKE_PROFIT_MARKET", "-tp"); err != nil {
		return res, err
	}
	if res.SLOrderID, err = leg(p.StopLoss, "STOP_MARKET", "-sl"); err != nil {
		if res.TPOrderID != "" { // do not leave half a bracket behind
			_, _ = a.venue.CancelOrder(context.WithoutCancel(ctx), c.ID, res.TPOrderID)
		}
		return contract.ProtectionResult{}, err
	}
	return res, nil
}

// CancelOrder implements connector.Adapter.
func (a *Adapter) CancelOrder(ctx context.Context, c connector.Credential, orderID string, _ *connector.Market) error {
	acct, err := a.account(ctx, c)
	if err != nil {
		return err
	}
	_, err = a.venue.CancelOrder(ctx, acct, orderID)
	return mapError(err)
}

// CancelAllOrders implements connector.Adapter.
func (a *Adapter) CancelAllOrders(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return 0, err
	}
	n, err := a.venue.CancelAll(ctx, acct, m.Native)
	return n, mapError(err)
}

// CloseAllPositions implements connector.Adapter.
func (a *Adapter) CloseAllPositions(ctx context.Context, c connector.Credential, m connector.Market) (contract.CloseAllResult, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return contract.CloseAllResult{}, err
	}
	r, err := a.venue.ClosePosition(ctx, acct, m.Native)
	if err != nil {
		return contract.CloseAllResult{}, mapError(err)
	}
	return contract.CloseAllResult{ClosedSize: r.ClosedSize, AvgClosePrice: r.AvgClosePrice}, nil
}

// SetLeverage implements connector.Adapter.
func (a *Adapter) SetLeverage(ctx context.Context, c connector.Credential, m connector.Market, leverage int) (int, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return 0, err
	}
	if m.MaxLeverage > 0 && leverage > m.MaxLeverage {
		return 0, contract.Errorf(contract.CodeInvalidRequest, "leverage %d is above the maximum %d of %s", leverage, m.MaxLeverage, m.Canonical)
	}
	n, err := a.venue.SetLeverage(ctx, acct, m.Native, leverage)
	return n, mapError(err)
}

// GetLeverage implements connector.LeverageReader.
func (a *Adapter) GetLeverage(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return 0, err
	}
	n, err := a.venue.Leverage(ctx, acct, m.Native)
	return n, mapError(err)
}

func native(m *connector.Market) string {
	if m == nil {
		return ""
	}
	return m.Native
}

// FindOrder implements connector.Adapter: the venue keeps every order of
// an account with its client order id, in any state.
func (a *Adapter) FindOrder(ctx context.Context, c connector.Credential, _ connector.Market, clientOrderID string) (connector.FoundOrder, bool, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return connector.FoundOrder{}, false, err
	}
	o, err := a.venue.OrderByClientID(ctx, acct, clientOrderID)
	var ve *venue.Error
	if errors.As(err, &ve) && ve.Kind == venue.KindOrderNotFound {
		return connector.FoundOrder{}, false, nil
	}
	if err != nil {
		return connector.FoundOrder{}, false, mapError(err)
	}
	return connector.FoundOrder{Order: orderFromVenue(o), AvgPrice: o.AvgFillPrice, Fee: o.Fee}, true, nil
}
