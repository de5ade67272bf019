package paradex

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
)

// TestQuotaWaitsForReset: when Paradex said a limit is used up, the next
// request waits for the reset, or is answered rate-limited at once when
// the wait would pass its deadline.
func TestQuotaWaitsForReset(t *testing.T) {
	c := newClient(DefaultConfig(), http.DefaultClient)
	var waited time.Duration
	c.wait = func(_ context.Context, d time.Duration) error { waited = d; return nil }
	hdr := http.Header{}
	hdr.Set("x-ratelimit-remaining", "0")
	hdr.Set("x-ratelimit-reset", fmt.Sprint(time.Now().Add(3*time.Second).UnixMilli()))
	c.observe("k", hdr)
	if err := c.admit(context.Background(), "k", "GET /account"); err != nil || waited < 2*time.Second {
		t.Fatalf("no deadline: %v, waited %v", err, waited)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ce, ok := contract.AsError(c.admit(ctx, "k", "GET /account"))
	if !ok || ce.Reason != contract.ReasonUpstreamRateLimited || ce.RetryAfterSeconds < 2 {
		t.Fatalf("short deadline: %+v", ce)
	}
	hdr.Set("x-ratelimit-reset", fmt.Sprint(time.Now().Add(-time.Second).UnixMilli()))
	c.observe("k", hdr)
	waited = 0
	if err := c.admit(context.Background(), "k", "GET /account"); err != nil || waited != 0 {
		t.Fatalf("after the reset: %v, waited %v", err, waited)
	}
	hdr.Set("x-ratelimit-remaining", "5")
	c.observe("k", hdr)
	if err := c.admit(context.Background(), "k", "GET /account"); err != nil || waited != 0 {
		t.Fatalf("with room left: %v, waited %v", err, waited)
	}
}

// TestSecretsStayOut: neither the Stark key nor a JWT appears in errors or
// in a logged token.
func TestSecretsStayOut(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx := context.Background()
	if _, err := f.a.GetBalance(ctx, f.cred); err != nil {
		t.Fatal(err)
	}
	tok, ok := f.a.c.tokens.Get(f.mustAccount(t).tokenKey(f.a.base(f.cred)))
	if !ok || !strings.HasPrefix(tok.JWT, "eyJ") {
		t.Fatalf("no cached token: %v", ok)
	}
	var logs strings.Builder
	slog.New(slog.NewTextHandler(&logs, nil)).Info("token", "t", tok)
	if strings.Contains(logs.String(), tok.JWT) || strings.Contains(fmt.Sprint(tok), tok.JWT) {
		t.Errorf("token printed: %s", logs.String())
	}
	f.sim.FailNext(http.MethodGet, "/v1/account", sim.Failure{Status: http.StatusUnauthorized, Code: "INVALID_TOKEN", Message: "bad"})
	f.sim.FailNext(http.MethodGet, "/v1/account", sim.Failure{Status: http.StatusUnauthorized, Code: "INVALID_TOKEN", Message: "bad"})
	_, err1 := f.a.GetBalance(ctx, f.cred)
	_, err2 := f.a.GetBalance(ctx, credential("bad", testAddress, "0x"+strings.Repeat("f", 64)))
	_, err3 := f.a.GetBalance(ctx, credential("bad2", testAddress, otherKey))
	for _, err := range []error{err1, err2, err3} {
		if err == nil {
			t.Fatal("no error")
		}
		for _, secret := range []string{testKey[2:], otherKey[2:], strings.Repeat("f", 64), "eyJ"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q carries a secret", err)
			}
		}
	}
}

func (f *fixture) mustAccount(t *testing.T) *account {
	t.Helper()
	a, err := decode(f.cred)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestQuotaSlowsBeforeParadexRefuses: with 3 private reads a minute, five
// in a row wait for the reset Paradex announced instead of drawing 429.
func TestQuotaSlowsBeforeParadexRefuses(t *testing.T) {
	f := newFixture(t, sim.Config{Quota: map[string]int{"read": 3}})
	var waits []time.Duration
	f.a.c.wait = func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		f.clock.advance(d) // waiting moves the shared clock past the reset
		return nil
	}
	for i := range 5 {
		if _, err := f.a.GetBalance(context.Background(), f.cred); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if len(waits) == 0 || waits[0] < 30*time.Second {
		t.Fatalf("waits %v: want one for the minute's reset", waits)
	}
}
