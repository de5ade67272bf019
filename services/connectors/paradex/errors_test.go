package paradex

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
)

// TestEveryErrorCodeMapped sends each code of the table through the
// adapter (the simulator answers it to a placement) and checks the reason,
// Paradex's code and message, and that the message says what to do.
func TestEveryErrorCodeMapped(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	m := f.market(t, "BTC-USD-PERP")
	for code, reason := range reasons {
		t.Run(code, func(t *testing.T) {
			f.sim.FailNext(http.MethodPost, "/v1/orders", sim.Failure{Status: http.StatusBadRequest, Code: code, Message: "paradex says " + code})
			_, err := f.a.PlaceStopOrder(ctx, f.cred, connector.OrderRequest{Market: m, Side: contract.Sell, Size: d("0.01"),
				TriggerPrice: d("50000"), ClientOrderID: "e-" + strings.ToLower(code)})
			ce, ok := contract.AsError(err)
			if !ok || ce.Code != contract.CodeExchangeError || ce.Reason != reason || ce.ExchangeCode != code ||
				ce.ExchangeMessage != "paradex says "+code || (hints[reason] != "" && !strings.Contains(ce.Message, hints[reason])) {
				t.Fatalf("%s: %+v, want reason %s", code, err, reason)
			}
		})
	}
}

// TestErrorFallbacks: without a known code the HTTP status decides.
func TestErrorFallbacks(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		status int
		code   string
		want   contract.Reason
	}{
		{"unknown code", http.StatusBadRequest, "SOMETHING_NEW", contract.ReasonUnknown},
		{"503", http.StatusServiceUnavailable, "", contract.ReasonUpstreamUnavailable},
		{"502", http.StatusBadGateway, "", contract.ReasonUpstreamUnavailable},
		{"403", http.StatusForbidden, "", contract.ReasonPermissionDenied},
		{"429", http.StatusTooManyRequests, "", contract.ReasonUpstreamRateLimited},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f.sim.FailNext(http.MethodGet, "/v1/account", sim.Failure{Status: tt.status, Code: tt.code, Message: "x"})
			_, err := f.a.GetBalance(ctx, f.cred)
			wantReason(t, err, tt.want)
		})
	}
}

// TestAsyncCancelReasons: the cancel_reason of an order closed after 201.
func TestAsyncCancelReasons(t *testing.T) {
	for _, tt := range []struct {
		reason string
		want   contract.Reason
	}{
		{"NOT_ENOUGH_MARGIN", contract.ReasonInsufficientMargin},
		{"POST_ONLY_WOULD_CROSS", contract.ReasonPostOnlyRejected},
		{"ORDER_EXCEEDS_POSITION_LIMIT", contract.ReasonInvalidOrder},
		{"", contract.ReasonInvalidOrder},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			err := refused(orderResp{ID: "1", Status: "CLOSED", Size: dv("1"), RemainingSize: dv("1"), CancelReason: tt.reason})
			wantReason(t, err, tt.want)
		})
	}
	for _, o := range []orderResp{
		{Status: "OPEN", Size: dv("1"), RemainingSize: dv("1")},
		{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("0.5"), CancelReason: "NOT_ENOUGH_MARGIN"},
		{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("1"), CancelReason: "USER_CANCELED"},
	} {
		if err := refused(o); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestDuplicateClientIDAnswersTheOrder: a retried placement whose
// client_id Paradex already has answers that order instead of failing.
func TestDuplicateClientIDAnswersTheOrder(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	m := f.market(t, "BTC-USD-PERP")
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	o := limit(m, contract.Buy, "0.01", mark.MarkPrice.Mul(d("0.9")).Round(1).String(), "again-1")
	first, err := f.a.PlaceLimitOrder(ctx, f.cred, o)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.a.PlaceLimitOrder(ctx, f.cred, o)
	if err != nil || second.OrderID != first.OrderID {
		t.Fatalf("retry: %+v, %v; want order %s", second, err, first.OrderID)
	}
	if n, _ := f.a.GetOrders(ctx, f.cred, &m); len(n.Orders) != 1 {
		t.Fatalf("%d orders open, want 1", len(n.Orders))
	}
}
