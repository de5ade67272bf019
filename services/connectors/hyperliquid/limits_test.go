package hyperliquid_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	"github.com/shopspring/decimal"
)

// Throwaway keys; they hold nothing anywhere.
const (
	accountA  = "0x5e9ee1089755c3435139848e47e6635505d5a13a"
	agentKeyA = "0x0123456789012345678901234567890123456789012345678901234567890123"
	accountB  = "0x1d9470d4b963f552e6f671a81619d395877bf409"
	agentKeyB = "e908f86dbb4d55ac876378565aafeabc187f6690f046459397b17d9b9a19688e"
)

func agentOf(t *testing.T, key string) string {
	t.Helper()
	k, err := hyperliquid.ParsePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return hyperliquid.Address(k.PubKey())
}

func credential(id, account, key string) connector.Credential {
	return connector.Credential{CredentialInfo: contract.CredentialInfo{ID: id, Exchange: contract.Hyperliquid, Environment: contract.Testnet},
		Secret: contract.Secret(fmt.Sprintf(`{"accountAddress":%q,"agentPrivateKey":%q}`, account, key))}
}

// simVenue starts a simulator with accounts A and B and their testnet
// agents approved.
func simVenue(t *testing.T, cfg sim.Config) (*sim.Sim, string) {
	t.Helper()
	s := sim.New(cfg)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	for acct, key := range map[string]string{accountA: agentKeyA, accountB: agentKeyB} {
		if err := s.AddUser(acct, decimal.NewFromInt(100000)); err != nil {
			t.Fatal(err)
		}
		s.ApproveAgent(acct, agentOf(t, key), false)
	}
	return s, srv.URL
}

func market(t *testing.T, a *hyperliquid.Adapter, c connector.Credential, native string) connector.Market {
	t.Helper()
	ms, err := a.Markets(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Native == native {
			return m
		}
	}
	t.Fatalf("no market %s", native)
	return connector.Market{}
}

// TestAddressLimit: once the venue answers that an address has used up its
// action budget, the connector holds that address's further actions for
// the venue's 10 s pace and answers UPSTREAM_RATE_LIMITED with retryAfter
// without sending them; cancels (a separate, larger budget), reads and
// other addresses go on.
func TestAddressLimit(t *testing.T) {
	clock := testenv.NewClock(time.Now())
	s, url := simVenue(t, sim.Config{Seed: 3, Now: clock.Now, RequestCap: 2})
	a := hyperliquid.NewAdapter(hyperliquid.Config{URL: url}, nil, hyperliquid.WithClock(clock.Now))
	credA, credB := credential("a", accountA, agentKeyA), credential("b", accountB, agentKeyB)
	ctx := context.Background()
	eth := market(t, a, credA, "ETH")
	place := func(c connector.Credential, i int) (contract.LimitOrderResult, error) {
		return a.PlaceLimitOrder(ctx, c, connector.OrderRequest{Market: eth, Side: contract.Buy, Size: decimal.RequireFromString("0.01"),
			Price: decimal.NewFromInt(int64(2000 + i)), ClientOrderID: fmt.Sprintf("limit-%d", i)})
	}
	limited := func(err error, what string) *contract.Error {
		t.Helper()
		ce, _ := contract.AsError(err)
		if ce.Code != contract.CodeExchangeError || ce.Reason != contract.ReasonUpstreamRateLimited || ce.RetryAfterSeconds < 1 || ce.RetryAfterSeconds > 10 {
			t.Fatalf("%s: %+v, want UPSTREAM_RATE_LIMITED with retryAfter within 10 s", what, ce)
		}
		return ce
	}

	first, err := place(credA, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := place(credA, 2); err != nil {
		t.Fatal(err)
	}
	ce := limited(func() error { _, err := place(credA, 3); return err }(), "the venue's refusal")
	if ce.ExchangeMessage == "" {
		t.Fatalf("the venue's message is kept: %+v", ce)
	}
	sent := s.Requests()
	limited(func() error { _, err := place(credA, 4); return err }(), "held locally")
	limited(func() error { _, err := a.SetLeverage(ctx, credA, eth, 3); return err }(), "setLeverage spends the same budget")
	if s.Requests() != sent {
		t.Fatalf("held actions reached the venue: %d requests", s.Requests()-sent)
	}
	if err := a.CancelOrder(ctx, credA, first.OrderID, &eth); err != nil {
		t.Fatalf("cancels have their own budget: %v", err)
	}
	if _, err := a.GetBalance(ctx, credA); err != nil {
		t.Fatalf("reads are not address-limited: %v", err)
	}
	if _, err := place(credB, 5); err != nil {
		t.Fatalf("another address is not held: %v", err)
	}
	clock.Advance(10 * time.Second)
	if _, err := place(credA, 6); err != nil {
		t.Fatalf("after 10 s the venue takes one action: %v", err)
	}
}
