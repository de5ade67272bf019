package connector

import (
	"context"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Credential is a credential with its decrypted secret, as an adapter sees it.
type Credential struct {
	contract.CredentialInfo
	Secret contract.Secret
}

// Market is one tradable perpetual market of a venue.
type Market struct {
	Canonical   string          // BASE-QUOTE-PERP, as clients see it
	Native      string          // the venue's own symbol
	Base        string          // base asset without multiplier, e.g. PEPE
	Quote       string          // USD, USDT, USDC
	Multiplier  int             // 1000 for 1000PEPE / kPEPE listings, else 1
	TickSize    decimal.Decimal // price step
	LotSize     decimal.Decimal // size step
	MinSize     decimal.Decimal // smallest size, zero when none
	MinNotional decimal.Decimal // smallest size*price, zero when none
	// ReduceOnlyBelowMinNotional: the venue takes reduce-only orders under
	// MinNotional (so a small remainder can be closed with a limit order).
	ReduceOnlyBelowMinNotional bool
	// MinNotionalAtMark: the venue values an order at the mark price, not
	// its limit price, against MinNotional (Paradex).
	MinNotionalAtMark bool
	MaxLeverage       int // zero when unknown
}

// OrderType is what kind of order an OrderRequest places.
type OrderType string

// Order types an adapter receives.
const (
	Limit      OrderType = "LIMIT"
	MarketType OrderType = "MARKET"
	Stop       OrderType = "STOP_MARKET"
)

// OrderRequest is a validated, rounded order. Sizes are on the lot step,
// prices on the tick; ClientOrderID is always set.
type OrderRequest struct {
	Market        Market
	Type          OrderType
	Side          contract.Side
	Size          decimal.Decimal
	Price         decimal.Decimal // limit orders
	TriggerPrice  decimal.Decimal // stop orders
	Mark          decimal.Decimal // stop orders: the mark at placement, never equal to TriggerPrice
	PostOnly      bool
	ReduceOnly    bool
	ClientOrderID string
	// Entries with takeProfit/stopLoss, on the tick and on the protecting
	// side; adapters see them only as EntryProtectionAttachers.
	TakeProfit, StopLoss *decimal.Decimal
}

// ProtectionRequest asks for reduce-only take-profit and/or stop-loss
// orders on a position, triggered on mark price. A nil price means that leg
// was not requested. Order sides are the opposite of PositionSide.
type ProtectionRequest struct {
	Market        Market
	PositionSide  contract.PositionSide
	Size          decimal.Decimal
	TakeProfit    *decimal.Decimal
	StopLoss      *decimal.Decimal
	ClientOrderID string // the legs use ClientOrderID+"-tp" and +"-sl"
}

// Adapter implements the 20 operations against one venue. Every method may
// return a *contract.Error: EXCHANGE_ERROR with a reason for upstream
// failures (AUTHENTICATION_FAILED, INSUFFICIENT_MARGIN, ...), UNKNOWN_MARKET
// or INVALID_REQUEST for input the venue refuses before sending. Any other
// error becomes INTERNAL_ERROR; a context deadline becomes EXCHANGE_TIMEOUT.
// Markets in results may be native symbols: the runtime makes them canonical.
type Adapter interface {
	// Exchange names the venue.
	Exchange() contract.Exchange
	// Markets lists the venue's perpetual markets for the credential's
	// environment. The runtime caches the answer per environment.
	Markets(ctx context.Context, c Credential) ([]Market, error)

	GetOrderbook(ctx context.Context, c Credential, m Market, depth int) (contract.OrderbookResult, error)
	GetMarkPrice(ctx context.Context, c Credential, m Market) (contract.MarkPriceResult, error)
	GetCandles(ctx context.Context, c Credential, m Market, intervalMinutes, limit int) (contract.CandlesResult, error)
	GetFundingRate(ctx context.Context, c Credential, m Market) (contract.FundingRateResult, error)
	GetMarketsWithFunding(ctx context.Context, c Credential) (contract.MarketsResult, error)
	GetFeeInfo(ctx context.Context, c Credential, m Market) (contract.FeeInfoResult, error)

	GetBalance(ctx context.Context, c Credential) (contract.BalanceResult, error)
	// GetPositions and GetOrders get a nil market when the client gave no filter.
	GetPositions(ctx context.Context, c Credential, m *Market) (contract.PositionsResult, error)
	GetOrders(ctx context.Context, c Credential, m *Market) (contract.OrdersResult, error)
	GetFills(ctx context.Context, c Credential, m Market, limit int) (contract.FillsResult, error)
	// TestCredentials reports false (not an error) when the venue rejects
	// the credential; errors are for failures to ask.
	TestCredentials(ctx context.Context, c Credential) (bool, error)

	PlaceLimitOrder(ctx context.Context, c Credential, o OrderRequest) (contract.LimitOrderResult, error)
	PlaceMarketOrder(ctx context.Context, c Credential, o OrderRequest) (contract.MarketOrderResult, error)
	PlaceStopOrder(ctx context.Context, c Credential, o OrderRequest) (contract.StopOrderResult, error)
	// PlaceBatchOrder returns one result per order, in request order; a
	// rejected order has status REJECTED and its error, the rest stand.
	PlaceBatchOrder(ctx context.Context, c Credential, orders []OrderRequest) ([]contract.BatchOrderResult, error)
	PlaceProtectionOrders(ctx context.Context, c Credential, p ProtectionRequest) (contract.ProtectionResult, error)

	// CancelOrder gets a nil market when the client gave none; venues that
	// need one return INVALID_REQUEST naming the market field.
	CancelOrder(ctx context.Context, c Credential, orderID string, m *Market) error
	CancelAllOrders(ctx context.Context, c Credential, m Market) (int, error)
	CloseAllPositions(ctx context.Context, c Credential, m Market) (contract.CloseAllResult, error)
	SetLeverage(ctx context.Context, c Credential, m Market, leverage int) (int, error)

	// FindOrder looks an order up by the clientOrderId the gateway placed it
	// with (the client's id, before any venue-specific mapping), open or not
	// (FILLED, CANCELLED, REJECTED too). found is false when the venue does
	// not know it; err only when the venue could not be asked. The runtime
	// calls it to learn the outcome of a placement that timed out, failed
	// upstream or whose connector died, before it answers or places again.
	FindOrder(ctx context.Context, c Credential, m Market, clientOrderID string) (o FoundOrder, found bool, err error)
}

// FoundOrder is an order the venue knows, found by the client order id it
// was placed with. Status is OPEN, PENDING, FILLED, CANCELLED or REJECTED;
// AvgPrice and Fee are zero when nothing filled or the venue does not say.
type FoundOrder struct {
	contract.Order
	AvgPrice decimal.Decimal
	Fee      decimal.Decimal
}

// ProtectionLinker is implemented by adapters of venues that tie a
// protection pair to its position: when one leg fires the venue cancels the
// other, and when the position closes it cancels both (position TP/SL). For
// adapters that do not implement it, or answer false, the runtime watches
// every pair it places and cancels what is left itself.
type ProtectionLinker interface {
	LinksProtection() bool
}

// ClaimCarrier is implemented by adapters of a venue in this process that
// records a placement's idempotency claim in the same durable record as
// the order, and nothing outside the process sees the order before that
// record is durable (the standalone paper venue: appendlog.Barrier's
// Take). For them a placement's claim, order and result share one durable
// write. Every other adapter's claim is durable before the venue is
// called.
type ClaimCarrier interface {
	CarriesClaims() bool
}
