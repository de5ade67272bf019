package binance

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
)

// TestErrorTable sends every row of the Binance code → reason table over
// HTTP, as the {code,msg} body of a real-looking Binance answer to a
// signed read, and checks the error the adapter returns: EXCHANGE_ERROR
// (502) with the row's reason written out again here, Binance's code and
// message, and a message that quotes Binance's. No row goes untested.
func TestErrorTable(t *testing.T) {
	tests := []struct {
		code   int
		reason contract.Reason
	}{
		{-1000, contract.ReasonUnknown},
		{-1001, contract.ReasonUpstreamUnavailable},
		{-1002, contract.ReasonPermissionDenied},
		{-1003, contract.ReasonUpstreamRateLimited},
		{-1007, contract.ReasonUpstreamUnavailable},
		{-1008, contract.ReasonUpstreamUnavailable},
		{-1011, contract.ReasonPermissionDenied},
		{-1015, contract.ReasonUpstreamRateLimited},
		{-1016, contract.ReasonUpstreamUnavailable},
		{-1021, contract.ReasonAuthenticationFailed},
		{-1022, contract.ReasonAuthenticationFailed},
		{-1102, contract.ReasonInvalidOrder},
		{-1111, contract.ReasonInvalidOrder},
		{-1116, contract.ReasonInvalidOrder},
		{-1121, contract.ReasonInvalidOrder},
		{-2010, contract.ReasonInvalidOrder},
		{-2011, contract.ReasonOrderNotFound},
		{-2013, contract.ReasonOrderNotFound},
		{-2014, contract.ReasonAuthenticationFailed},
		{-2015, contract.ReasonAuthenticationFailed},
		{-2018, contract.ReasonInsufficientMargin},
		{-2019, contract.ReasonInsufficientMargin},
		{-2021, contract.ReasonInvalidOrder},
		{-2022, contract.ReasonInvalidOrder},
		{-2027, contract.ReasonInsufficientMargin},
		{-2028, contract.ReasonInsufficientMargin},
		{-4003, contract.ReasonInvalidOrder},
		{-4004, contract.ReasonInvalidOrder},
		{-4005, contract.ReasonInvalidOrder},
		{-4013, contract.ReasonInvalidOrder},
		{-4014, contract.ReasonInvalidOrder},
		{-4015, contract.ReasonInvalidOrder},
		{-4016, contract.ReasonInvalidOrder},
		{-4023, contract.ReasonInvalidOrder},
		{-4024, contract.ReasonInvalidOrder},
		{-4028, contract.ReasonInvalidOrder},
		{-4046, contract.ReasonInvalidOrder},
		{-4047, contract.ReasonInvalidOrder},
		{-4048, contract.ReasonInvalidOrder},
		{-4061, contract.ReasonInvalidOrder},
		{-4082, contract.ReasonInvalidOrder},
		{-4116, contract.ReasonInvalidOrder},
		{-4118, contract.ReasonInvalidOrder},
		{-4120, contract.ReasonInvalidOrder},
		{-4142, contract.ReasonInvalidOrder},
		{-4164, contract.ReasonInvalidOrder},
		{-4202, contract.ReasonPermissionDenied},
		{-4203, contract.ReasonPermissionDenied},
		{-4205, contract.ReasonPermissionDenied},
		{-4206, contract.ReasonPermissionDenied},
		{-4403, contract.ReasonPermissionDenied},
		{-5021, contract.ReasonInvalidOrder},
		{-5022, contract.ReasonPostOnlyRejected},
		{-5028, contract.ReasonAuthenticationFailed},
	}
	seen := map[int]bool{}
	for _, tt := range tests {
		seen[tt.code] = true
		t.Run(itoa(int64(tt.code)), func(t *testing.T) {
			f := newFixture(t, sim.Config{}, nil)
			msg := "binance says no to " + itoa(int64(tt.code))
			fail := sim.Failure{Status: http.StatusBadRequest, Code: tt.code, Msg: msg}
			f.sim.FailNext(http.MethodGet, "/fapi/v3/account", fail)
			if tt.code == -1021 || tt.code == -5028 { // answered again after the clock resync
				f.sim.FailNext(http.MethodGet, "/fapi/v3/account", fail)
			}
			_, err := f.a.GetBalance(context.Background(), f.cred)
			ce, ok := contract.AsError(err)
			if !ok || ce.Code != contract.CodeExchangeError || ce.Reason != tt.reason || ce.ExchangeCode != itoa(int64(tt.code)) ||
				ce.ExchangeMessage != msg || ce.Status() != http.StatusBadGateway || !strings.Contains(ce.Message, msg) {
				t.Errorf("got %#v, want EXCHANGE_ERROR %s with Binance's code and message", err, tt.reason)
			}
		})
	}
	for code := range reasons {
		if !seen[code] {
			t.Errorf("table row %d has no test", code)
		}
	}
}

// TestErrorFallbackByStatus: a code the table does not know is classified
// by the HTTP status of Binance's answer.
func TestErrorFallbackByStatus(t *testing.T) {
	tests := []struct {
		name   string
		status int
		reason contract.Reason
	}{
		{"401", 401, contract.ReasonAuthenticationFailed},
		{"403 WAF", 403, contract.ReasonPermissionDenied},
		{"408 backend timeout", 408, contract.ReasonUpstreamUnavailable},
		{"503", 503, contract.ReasonUpstreamUnavailable},
		{"400 unknown code", 400, contract.ReasonUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sim.Config{}, nil)
			f.sim.FailNext(http.MethodGet, "/fapi/v3/account", sim.Failure{Status: tt.status, Code: -9999, Msg: "new to us"})
			_, err := f.a.GetBalance(context.Background(), f.cred)
			if ce := testenv.WantUpstream(t, err, tt.reason); ce.ExchangeCode != "-9999" {
				t.Errorf("exchange code %s", ce.ExchangeCode)
			}
		})
	}
	// 429 and 418 take the rate-limit path (TestUpstreamRateLimited); the
	// table's fallback agrees with it.
	for _, status := range []int{429, 418} {
		if r := upstreamError(status, -9999, "").Reason; r != contract.ReasonUpstreamRateLimited {
			t.Errorf("HTTP %d: %s", status, r)
		}
	}
}
