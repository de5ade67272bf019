package connectortest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

// RunUnreadFill places a market order through the runtime while the
// venue's order reads find nothing (hide true) and checks DESIGN §13's
// answer: not a zero fill but an unsettled outcome naming the order and
// the clientOrderId. Once reads work again (hide false) and the first
// call's deadline has passed, the same clientOrderId answers the real fill,
// so no zeros were stored as the idempotent result.
func RunUnreadFill(t *testing.T, r *Replica, market, size string, hide func(on bool)) {
	t.Helper()
	params := map[string]any{"market": market, "side": contract.Buy, "size": size, "clientOrderId": "unread-1"}
	hide(true)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	var res contract.MarketOrderResult
	err := r.Call(ctx, contract.OpPlaceMarketOrder, params, &res)
	cancel()
	ce, ok := contract.AsError(err)
	if !ok {
		t.Fatalf("placeMarketOrder with its fill unreadable answered %+v, %v; want an unsettled outcome", res, err)
	}
	if !strings.Contains(ce.Message, string(contract.StatusUnknown)) || !strings.Contains(ce.Message, "unread-1") ||
		!strings.Contains(ce.Message, "market order ") {
		t.Fatalf("unsettled answer %q must name the order, its status UNKNOWN and the clientOrderId", ce.Message)
	}
	hide(false)
	Eventually(t, 15*time.Second, "the repeat answers the real fill", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res = contract.MarketOrderResult{}
		err := r.Call(ctx, contract.OpPlaceMarketOrder, params, &res)
		return err == nil
	})
	if !res.FilledSize.IsPositive() || !res.FilledPrice.IsPositive() || res.OrderID == "" {
		t.Fatalf("repeat after the reads came back: %+v, want the order's real fill", res)
	}
}
