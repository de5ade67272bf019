package connector

import "context"

// OrderByIDFinder is implemented by adapters that read one order in any
// state by the venue's order id. The account feed's reconcile uses it for
// an order that ended while the feed was down and has no clientOrderId to
// look it up by (FindOrder), e.g. on Hyperliquid, whose orders keep only a
// hash of it.
type OrderByIDFinder interface {
	FindOrderByID(ctx context.Context, c Credential, m Market, orderID string) (FoundOrder, bool, error)
}
