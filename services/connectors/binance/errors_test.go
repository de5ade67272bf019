package binance

import (
	"net/http"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// TestErrorTable checks every row of the Binance code → reason table with
// its expected reason written out again here, and that no row is untested.
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
			e := upstreamError(http.StatusBadRequest, tt.code, "binance says no")
			if e.Code != contract.CodeExchangeError || e.Reason != tt.reason || e.ExchangeCode != itoa(int64(tt.code)) ||
				e.ExchangeMessage != "binance says no" || e.Status() != http.StatusBadGateway {
				t.Errorf("got %+v, want EXCHANGE_ERROR %s", e, tt.reason)
			}
		})
	}
	for code := range reasons {
		if !seen[code] {
			t.Errorf("table row %d has no test", code)
		}
	}
}

func TestErrorFallbackByStatus(t *testing.T) {
	tests := []struct {
		name   string
		status int
		reason contract.Reason
	}{
		{"429", 429, contract.ReasonUpstreamRateLimited},
		{"418", 418, contract.ReasonUpstreamRateLimited},
		{"401", 401, contract.ReasonAuthenticationFailed},
		{"403 WAF", 403, contract.ReasonPermissionDenied},
		{"408 backend timeout", 408, contract.ReasonUpstreamUnavailable},
		{"503", 503, contract.ReasonUpstreamUnavailable},
		{"400 unknown code", 400, contract.ReasonUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if e := upstreamError(tt.status, -9999, ""); e.Reason != tt.reason {
				t.Errorf("got %s, want %s", e.Reason, tt.reason)
			}
		})
	}
}
