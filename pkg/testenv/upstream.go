package testenv

import (
	"net/http"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// RoundTripFunc is an http.RoundTripper made of a function: a transport
// that answers in process, for tests that look at what a client sends.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f RoundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// WantUpstream fails t unless err is EXCHANGE_ERROR with reason, and
// returns it.
func WantUpstream(t testing.TB, err error, reason contract.Reason) *contract.Error {
	t.Helper()
	ce, ok := contract.AsError(err)
	if err == nil || !ok || ce.Code != contract.CodeExchangeError || ce.Reason != reason {
		t.Fatalf("want EXCHANGE_ERROR %s, got %v", reason, err)
	}
	return ce
}
