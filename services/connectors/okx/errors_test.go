package okx

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/okx/sim"
)

// TestErrorTable sends every row of the OKX code → reason table over HTTP,
// as the {code,msg,data} answer of a signed read, and checks the error the
// adapter returns: EXCHANGE_ERROR with the row's reason written out again
// here, OKX's code and message, and a message that quotes OKX's. No row
// goes untested.
func TestErrorTable(t *testing.T) {
	tests := []struct {
		code   string
		reason contract.Reason
	}{
		{"1", contract.ReasonUnknown},
		{"50001", contract.ReasonUpstreamUnavailable},
		{"50002", contract.ReasonInvalidOrder},
		{"50004", contract.ReasonUpstreamUnavailable},
		{"50011", contract.ReasonUpstreamRateLimited},
		{"50013", contract.ReasonUpstreamUnavailable},
		{"50014", contract.ReasonInvalidOrder},
		{"50026", contract.ReasonUpstreamUnavailable},
		{"50030", contract.ReasonPermissionDenied},
		{"50061", contract.ReasonUpstreamRateLimited},
		{"50100", contract.ReasonPermissionDenied},
		{"50101", contract.ReasonAuthenticationFailed},
		{"50102", contract.ReasonAuthenticationFailed},
		{"50103", contract.ReasonAuthenticationFailed},
		{"50104", contract.ReasonAuthenticationFailed},
		{"50105", contract.ReasonAuthenticationFailed},
		{"50106", contract.ReasonAuthenticationFailed},
		{"50107", contract.ReasonAuthenticationFailed},
		{"50110", contract.ReasonPermissionDenied},
		{"50111", contract.ReasonAuthenticationFailed},
		{"50112", contract.ReasonAuthenticationFailed},
		{"50113", contract.ReasonAuthenticationFailed},
		{"50114", contract.ReasonAuthenticationFailed},
		{"50120", contract.ReasonPermissionDenied},
		{"51000", contract.ReasonInvalidOrder},
		{"51001", contract.ReasonInvalidOrder},
		{"51004", contract.ReasonInsufficientMargin},
		{"51005", contract.ReasonInvalidOrder},
		{"51006", contract.ReasonInvalidOrder},
		{"51008", contract.ReasonInsufficientMargin},
		{"51010", contract.ReasonPermissionDenied},
		{"51016", contract.ReasonInvalidOrder},
		{"51020", contract.ReasonInvalidOrder},
		{"51046", contract.ReasonInvalidOrder},
		{"51047", contract.ReasonInvalidOrder},
		{"51048", contract.ReasonInvalidOrder},
		{"51049", contract.ReasonInvalidOrder},
		{"51065", contract.ReasonInvalidOrder},
		{"51101", contract.ReasonInvalidOrder},
		{"51121", contract.ReasonInvalidOrder},
		{"51131", contract.ReasonInsufficientMargin},
		{"51137", contract.ReasonInvalidOrder},
		{"51150", contract.ReasonInvalidOrder},
		{"51169", contract.ReasonInvalidOrder},
		{"51400", contract.ReasonOrderNotFound},
		{"51401", contract.ReasonOrderNotFound},
		{"51402", contract.ReasonOrderNotFound},
		{"51603", contract.ReasonOrderNotFound},
		{"59102", contract.ReasonInvalidOrder},
	}
	if len(tests) != len(reasons) {
		t.Fatalf("%d rows tested, the table has %d", len(tests), len(reasons))
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			f := newFixture(t, sim.Config{}, nil)
			msg := "okx says " + tt.code
			fail := sim.Failure{Code: tt.code, Msg: msg}
			f.sim.FailNext(http.MethodGet, "/api/v5/account/balance", fail)
			if tt.code == "50102" { // retried once after a clock resync
				f.sim.FailNext(http.MethodGet, "/api/v5/account/balance", fail)
			}
			_, err := f.a.GetBalance(context.Background(), f.cred)
			ce := testenv.WantUpstream(t, err, tt.reason)
			if ce.ExchangeCode != tt.code || ce.ExchangeMessage != msg || !strings.Contains(ce.Message, msg) {
				t.Errorf("error %+v", ce)
			}
			if ce.Status() != http.StatusBadGateway {
				t.Errorf("status %d, want 502", ce.Status())
			}
			if tt.reason == contract.ReasonUpstreamRateLimited && ce.RetryAfterSeconds != 2 {
				t.Errorf("retryAfter %d, want 2 (OKX's window)", ce.RetryAfterSeconds)
			}
		})
	}
}

// TestFallbackReasons: a code the table does not know is classified by
// the HTTP status.
func TestFallbackReasons(t *testing.T) {
	tests := []struct {
		status int
		reason contract.Reason
	}{
		{http.StatusUnauthorized, contract.ReasonAuthenticationFailed},
		{http.StatusForbidden, contract.ReasonPermissionDenied},
		{http.StatusInternalServerError, contract.ReasonUpstreamUnavailable},
		{http.StatusServiceUnavailable, contract.ReasonUpstreamUnavailable},
		{http.StatusOK, contract.ReasonUnknown},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			f := newFixture(t, sim.Config{}, nil)
			f.sim.FailNext(http.MethodGet, "/api/v5/account/balance", sim.Failure{Status: tt.status, Code: "59999", Msg: "new code"})
			_, err := f.a.GetBalance(context.Background(), f.cred)
			if ce := testenv.WantUpstream(t, err, tt.reason); ce.ExchangeCode != "59999" {
				t.Errorf("exchange code %s", ce.ExchangeCode)
			}
		})
	}
}

// TestSecretsNotInErrors: no error message carries the key, secret or
// passphrase, whatever OKX answered.
func TestSecretsNotInErrors(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	for _, c := range []string{"50113", "50105", "50001"} {
		f.sim.FailNext(http.MethodGet, "/api/v5/account/balance", sim.Failure{Code: c, Msg: "refused"})
		_, err := f.a.GetBalance(context.Background(), f.cred)
		for _, s := range []string{testKey, testSecret, testPassphrase} {
			if err == nil || strings.Contains(err.Error(), s) {
				t.Errorf("code %s: error %v", c, err)
			}
		}
	}
}
