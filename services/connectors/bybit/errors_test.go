package bybit

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/bybit/sim"
)

// TestEveryRetCodeMapped sends each retCode of the table through the
// adapter (the simulator answers it to a placement) and checks the reason,
// Bybit's code and message, and that the message says what to do.
func TestEveryRetCodeMapped(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTCUSDT")
	for code, reason := range reasons {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			if code == 10002 || code == 10006 {
				t.Skip("answered by the client itself: a clock resync and retry, and a quota wait (TestClockSkew, TestRateLimitedAnswer)")
			}
			f.sim.FailNext(http.MethodPost, "/v5/order/create", sim.Failure{RetCode: code, RetMsg: "bybit says " + strconv.Itoa(code)})
			_, err := f.a.PlaceStopOrder(ctx, f.cred, limit(m, contract.Sell, "0.01", "0", "e-"+strconv.Itoa(code+1000000)))
			ce, ok := contract.AsError(err)
			if !ok || ce.Code != contract.CodeExchangeError || ce.Reason != reason || ce.ExchangeCode != strconv.Itoa(code) ||
				ce.ExchangeMessage != "bybit says "+strconv.Itoa(code) {
				t.Fatalf("retCode %d: %+v, want reason %s", code, err, reason)
			}
		})
	}
}

// TestRetCodeFallbacks: an unknown retCode is UNKNOWN; 10002 after the
// one resync is AUTHENTICATION_FAILED; HTTP 5xx is UPSTREAM_UNAVAILABLE.
func TestRetCodeFallbacks(t *testing.T) {
	if e := upstreamError(123456, "new"); e.Reason != contract.ReasonUnknown || e.ExchangeCode != "123456" {
		t.Errorf("unknown code: %+v", e)
	}
	f := newFixture(t, sim.Config{}, nil)
	f.sim.FailNext(http.MethodGet, "/v5/account/wallet-balance", sim.Failure{RetCode: 10002, RetMsg: "expired"})
	f.sim.FailNext(http.MethodGet, "/v5/account/wallet-balance", sim.Failure{RetCode: 10002, RetMsg: "expired"})
	_, err := f.a.GetBalance(context.Background(), f.cred)
	testenv.WantUpstream(t, err, contract.ReasonAuthenticationFailed)
	if n := f.sim.Hits(http.MethodGet, "/v5/market/time"); n != 2 {
		t.Errorf("/v5/market/time asked %d times, want 2 (first use, then the resync after 10002)", n)
	}
	f.sim.FailNext(http.MethodGet, "/v5/account/wallet-balance", sim.Failure{Status: http.StatusBadGateway})
	_, err = f.a.GetBalance(context.Background(), f.cred)
	testenv.WantUpstream(t, err, contract.ReasonUpstreamUnavailable)
}
