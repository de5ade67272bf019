package paper

import "errors"

// Errors returned by the Engine, wrapped with the operation and what to fix.
// Match them with errors.Is.
var (
	// ErrUnknownMarket means the market symbol is not listed.
	ErrUnknownMarket = errors.New("unknown market")
	// ErrInsufficientMargin means the account's free collateral cannot
	// cover the order or leverage change.
	ErrInsufficientMargin = errors.New("insufficient margin")
	// ErrPostOnlyWouldCross means a post-only order would have taken
	// liquidity.
	ErrPostOnlyWouldCross = errors.New("post-only order would cross the book")
	// ErrReduceOnly means a reduce-only order would open or grow a position.
	ErrReduceOnly = errors.New("reduce-only order would not reduce the position")
	// ErrOrderNotFound means no open or pending order has that id.
	ErrOrderNotFound = errors.New("order not found")
	// ErrOrderClosed is returned together with ErrOrderNotFound when the
	// order exists but is already filled, cancelled or rejected.
	ErrOrderClosed = errors.New("order already closed")
	// ErrInvalidOrder means an order's size, price, trigger, type or side, or
	// a leverage value, is not acceptable.
	ErrInvalidOrder = errors.New("invalid order")
	// ErrInvalidRequest means a non-order argument (account id, depth,
	// candle interval or limit, starting balance, price) is not acceptable.
	ErrInvalidRequest = errors.New("invalid request")
)
