package keys_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/shopspring/decimal"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/apikey"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/filestore"
	"github.com/perpgate/perpgate/services/keys/postgres"
)

func newPostgresStore(t *testing.T) keys.Store {
	t.Helper()
	pool, _ := testenv.Postgres(t)
	s, err := postgres.New(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newFileStore(t *testing.T) keys.Store {
	t.Helper()
	s, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var storeImpls = []struct {
	name string
	new  func(t *testing.T) keys.Store
}{
	{name: "postgres", new: newPostgresStore},
	{name: "file", new: newFileStore},
}

func TestStore(t *testing.T) {
	for _, impl := range storeImpls {
		t.Run(impl.name, func(t *testing.T) { testStore(t, impl.new) })
	}
}

// at returns a fixed test time plus d, at microsecond precision.
func at(d time.Duration) time.Time {
	return time.Date(2031, 5, 6, 7, 8, 9, 123456000, time.UTC).Add(d)
}

func newKeyInfo(accountID string, created time.Time) contract.KeyInfo {
	k, err := apikey.Generate(apikey.EnvTest)
	if err != nil {
		panic(err)
	}
	return contract.KeyInfo{
		ID: uuid.NewString(), AccountID: accountID, Hash: k.Hash(), Display: k.Display(),
		Env: contract.KeyEnvTest, AllowedOperations: []string{}, AllowedExchanges: []contract.Exchange{},
		AllowedCredentials: []string{}, CreatedAt: created,
	}
}

// testStore is the suite every keys.Store implementation must pass.
func testStore(t *testing.T, newStore func(t *testing.T) keys.Store) {
	ctx := context.Background()

	t.Run("accounts", func(t *testing.T) {
		s := newStore(t)
		a := keys.Account{ID: uuid.NewString(), Name: "acme", Tier: contract.TierBuilder, CreatedAt: at(0)}
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		got, err := s.Account(ctx, a.ID)
		if err != nil || got != a {
			t.Fatalf("Account = %+v, %v; want %+v", got, err, a)
		}
		if _, err := s.Account(ctx, uuid.NewString()); !errors.Is(err, keys.ErrAccountNotFound) {
			t.Fatalf("unknown account: err = %v, want ErrAccountNotFound", err)
		}
		older := keys.Account{ID: uuid.NewString(), Name: "older", Tier: contract.TierFree, CreatedAt: at(-time.Hour)}
		if err := s.CreateAccount(ctx, older); err != nil {
			t.Fatal(err)
		}
		all, err := s.ListAccounts(ctx)
		if err != nil || len(all) != 2 || all[0] != older || all[1] != a {
			t.Fatalf("ListAccounts = %+v, %v; want [older, acme]", all, err)
		}
	})

	t.Run("keys", func(t *testing.T) {
		s := newStore(t)
		a := keys.Account{ID: uuid.NewString(), Tier: contract.TierPro, CreatedAt: at(0)}
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		exp := at(time.Hour)
		k1 := newKeyInfo(a.ID, at(time.Second))
		k1.AllowedOperations = []string{contract.OpGetBalance, contract.OpGetOrders}
		k1.AllowedExchanges = []contract.Exchange{contract.Paper, contract.OKX}
		k1.AllowedCredentials = []string{uuid.NewString()}
		k1.ExpiresAt = &exp
		k2 := newKeyInfo(a.ID, at(2*time.Second))
		for _, k := range []contract.KeyInfo{k2, k1} {
			if err := s.CreateKey(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		k1.Tier, k2.Tier = a.Tier, a.Tier

		got, err := s.KeyByHash(ctx, k1.Hash)
		if err != nil {
			t.Fatal(err)
		}
		assertKey(t, got, k1)
		list, err := s.Keys(ctx, a.ID)
		if err != nil || len(list) != 2 {
			t.Fatalf("Keys = %d keys, %v; want 2", len(list), err)
		}
		assertKey(t, list[0], k1)
		assertKey(t, list[1], k2)

		revoked, err := s.RevokeKey(ctx, k1.ID, at(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(at(time.Minute)) {
			t.Fatalf("RevokedAt = %v, want %v", revoked.RevokedAt, at(time.Minute))
		}
		again, err := s.RevokeKey(ctx, k1.ID, at(2*time.Minute))
		if err != nil || !again.RevokedAt.Equal(at(time.Minute)) {
			t.Fatalf("second revoke: RevokedAt = %v, %v; want the first time kept", again.RevokedAt, err)
		}
		byHash, err := s.KeyByHash(ctx, k1.Hash)
		if err != nil || byHash.RevokedAt == nil {
			t.Fatalf("revoked key by hash = %+v, %v; want it with RevokedAt", byHash, err)
		}

		tests := []struct {
			name string
			err  error
			want error
		}{
			{name: "unknown hash", err: second(s.KeyByHash(ctx, newKeyInfo(a.ID, at(0)).Hash)), want: keys.ErrKeyNotFound},
			{name: "revoke unknown", err: second(s.RevokeKey(ctx, uuid.NewString(), at(0))), want: keys.ErrKeyNotFound},
			{name: "list unknown account", err: second(s.Keys(ctx, uuid.NewString())), want: keys.ErrAccountNotFound},
			{name: "create for unknown account", err: s.CreateKey(ctx, newKeyInfo(uuid.NewString(), at(0))), want: keys.ErrAccountNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if !errors.Is(tt.err, tt.want) {
					t.Fatalf("err = %v, want %v", tt.err, tt.want)
				}
			})
		}
	})

	t.Run("guards", func(t *testing.T) {
		s := newStore(t)
		a := keys.Account{ID: uuid.NewString(), Tier: contract.TierPro, CreatedAt: at(0)}
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		maxOrder, maxDaily := decimal.RequireFromString("1000.5"), decimal.RequireFromString("25000")
		maxPos, maxPos2 := decimal.RequireFromString("7500.25"), decimal.RequireFromString("9000")
		k := newKeyInfo(a.ID, at(time.Second))
		k.Guards = contract.Guards{ReadOnly: true, AllowedMarkets: []string{"BTC-USDT-PERP", "ETH"},
			MaxOrderNotional: &maxOrder, MaxDailyNotional: &maxDaily, MaxLeverage: 5, MaxPositionNotional: &maxPos}
		if err := s.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		got, err := s.KeyByHash(ctx, k.Hash)
		if err != nil {
			t.Fatal(err)
		}
		assertGuards(t, got.Guards, k.Guards)

		seen := contract.Guards{}
		updated, err := s.UpdateGuards(ctx, k.ID, func(g contract.Guards) (contract.Guards, error) {
			seen = g
			g.ReadOnly, g.MaxDailyNotional, g.MaxLeverage, g.MaxPositionNotional = false, nil, 10, &maxPos2
			return g, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		assertGuards(t, seen, k.Guards)
		want := contract.Guards{AllowedMarkets: k.AllowedMarkets, MaxOrderNotional: &maxOrder, MaxLeverage: 10, MaxPositionNotional: &maxPos2}
		assertGuards(t, updated.Guards, want)
		if updated.Hash != k.Hash || updated.Tier != a.Tier {
			t.Fatalf("UpdateGuards returned %+v, want the key with its tier", updated)
		}
		again, _ := s.KeyByHash(ctx, k.Hash)
		assertGuards(t, again.Guards, want)

		refused := errors.New("refused")
		if _, err := s.UpdateGuards(ctx, k.ID, func(g contract.Guards) (contract.Guards, error) {
			return contract.Guards{ReadOnly: true}, refused
		}); !errors.Is(err, refused) {
			t.Fatalf("change error = %v, want it returned", err)
		}
		again, _ = s.KeyByHash(ctx, k.Hash)
		assertGuards(t, again.Guards, want)
		if _, err := s.UpdateGuards(ctx, uuid.NewString(), func(g contract.Guards) (contract.Guards, error) { return g, nil }); !errors.Is(err, keys.ErrKeyNotFound) {
			t.Fatalf("unknown key: err = %v, want ErrKeyNotFound", err)
		}
	})

	t.Run("usage and audit", func(t *testing.T) {
		s := newStore(t)
		a := keys.Account{ID: uuid.NewString(), Tier: contract.TierPro, CreatedAt: at(0)}
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		k := newKeyInfo(a.ID, at(time.Second))
		if err := s.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		if got, err := s.KeyByID(ctx, k.ID); err != nil || got.Hash != k.Hash || got.Tier != a.Tier {
			t.Fatalf("KeyByID = %+v, %v", got, err)
		}
		if _, err := s.KeyByID(ctx, uuid.NewString()); !errors.Is(err, keys.ErrKeyNotFound) {
			t.Fatalf("KeyByID unknown: %v", err)
		}
		for range 2 {
			if err := s.AddUsage(ctx, []contract.UsageEntry{
				{KeyID: k.ID, Day: "2031-05-06", Operation: "getBalance", OK: 3, Failed: 1},
				{KeyID: k.ID, Day: "2031-05-05", Operation: "getBalance", OK: 1},
				{KeyID: uuid.NewString(), Day: "2031-05-06", Operation: "getBalance", OK: 9}, // no such key: dropped
			}); err != nil {
				t.Fatal(err)
			}
		}
		u, err := s.Usage(ctx, k.ID, "2031-05-06")
		if err != nil || len(u) != 1 || u[0].OK != 6 || u[0].Failed != 2 || u[0].Day != "2031-05-06" {
			t.Fatalf("Usage = %+v, %v", u, err)
		}

		e := contract.AuditEntry{Time: at(time.Minute), RequestID: "req-1", AccountID: a.ID, KeyID: k.ID, KeyDisplay: k.Display,
			Operation: contract.OpSetLeverage, Params: json.RawMessage(`{"leverage":3}`), Code: contract.AuditPending, OrderIDs: []string{}, Via: "v1"}
		final := e
		final.Code, final.OrderIDs, final.DurationMs = "OK", []string{"7"}, 12.5
		later := e
		later.RequestID, later.Time = "req-2", at(2*time.Minute)
		for _, x := range []contract.AuditEntry{e, final, e, later} { // the late PENDING must not undo the outcome
			if err := s.PutAudit(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		all, err := s.Audit(ctx, keys.AuditQuery{AccountID: a.ID, Since: at(0), Until: at(time.Hour), Limit: 10})
		if err != nil || len(all) != 2 || all[0].Code != "OK" || all[0].OrderIDs[0] != "7" || all[0].DurationMs != 12.5 ||
			all[1].RequestID != "req-2" || !all[0].Time.Equal(at(time.Minute)) {
			t.Fatalf("Audit = %+v, %v", all, err)
		}
		next, err := s.Audit(ctx, keys.AuditQuery{AccountID: a.ID, Since: at(0), Until: at(time.Hour), Limit: 10,
			AfterTime: all[0].Time, AfterID: all[0].RequestID})
		if err != nil || len(next) != 1 || next[0].RequestID != "req-2" {
			t.Fatalf("Audit after the first = %+v, %v", next, err)
		}
		newest, err := s.Audit(ctx, keys.AuditQuery{AccountID: a.ID, Since: at(0), Until: at(time.Hour), Limit: 1,
			AfterTime: at(time.Hour), Newest: true})
		if err != nil || len(newest) != 1 || newest[0].RequestID != "req-2" {
			t.Fatalf("Audit newest first = %+v, %v", newest, err)
		}
		before, err := s.Audit(ctx, keys.AuditQuery{AccountID: a.ID, Since: at(0), Until: at(time.Hour), Limit: 10,
			AfterTime: newest[0].Time, AfterID: newest[0].RequestID, Newest: true})
		if err != nil || len(before) != 1 || before[0].RequestID != "req-1" {
			t.Fatalf("Audit newest first, after the newest = %+v, %v", before, err)
		}
		window, err := s.Audit(ctx, keys.AuditQuery{AccountID: a.ID, Since: at(90 * time.Second), Until: at(time.Hour), Limit: 10})
		if err != nil || len(window) != 1 {
			t.Fatalf("Audit since = %+v, %v", window, err)
		}
		pending, err := s.Audit(ctx, keys.AuditQuery{AccountID: a.ID, Since: at(0), Until: at(time.Hour), Limit: 10, Pending: true})
		if err != nil || len(pending) != 1 || pending[0].RequestID != "req-2" {
			t.Fatalf("Audit of the PENDING entries = %+v, %v; want req-2 only (req-1 has its outcome)", pending, err)
		}
	})

	t.Run("quota", func(t *testing.T) {
		s := newStore(t)
		a := keys.Account{ID: uuid.NewString(), Tier: contract.TierFree, CreatedAt: at(0)}
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i := range 3 {
			k := newKeyInfo(a.ID, at(time.Duration(i)*time.Second))
			if err := s.CreateKey(ctx, k); err != nil {
				t.Fatalf("key %d: %v", i, err)
			}
			ids = append(ids, k.ID)
		}
		if err := s.CreateKey(ctx, newKeyInfo(a.ID, at(time.Hour))); !errors.Is(err, keys.ErrKeyLimit) {
			t.Fatalf("4th key: err = %v, want ErrKeyLimit", err)
		}
		if _, err := s.RevokeKey(ctx, ids[0], at(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateKey(ctx, newKeyInfo(a.ID, at(time.Hour))); err != nil {
			t.Fatalf("key after a revocation: %v", err)
		}
	})

	t.Run("quota under concurrency", func(t *testing.T) {
		s := newStore(t)
		a := keys.Account{ID: uuid.NewString(), Tier: contract.TierFree, CreatedAt: at(0)}
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		const n = 12
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = s.CreateKey(ctx, newKeyInfo(a.ID, at(time.Duration(i)))) })
		}
		wg.Wait()
		ok, limited := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, keys.ErrKeyLimit):
				limited++
			default:
				t.Fatalf("unexpected error: %v", err)
			}
		}
		if ok != 3 || limited != n-3 {
			t.Fatalf("created %d, limited %d; want 3 and %d", ok, limited, n-3)
		}
	})

	t.Run("credentials", func(t *testing.T) {
		s := newStore(t)
		a := keys.Account{ID: uuid.NewString(), Tier: contract.TierFree, CreatedAt: at(0)}
		other := keys.Account{ID: uuid.NewString(), Tier: contract.TierFree, CreatedAt: at(0)}
		for _, x := range []keys.Account{a, other} {
			if err := s.CreateAccount(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		mk := func(acct string, d time.Duration) keys.Credential {
			return keys.Credential{
				Info: contract.CredentialInfo{ID: uuid.NewString(), AccountID: acct, Exchange: contract.Paper,
					Environment: contract.Testnet, Label: "l" + fmt.Sprint(d), CreatedAt: at(d)},
				Sealed: keys.Sealed{KeyID: "0badcafe", Data: []byte{0, 1, 2, 255}},
			}
		}
		c1, c2, c3 := mk(a.ID, time.Second), mk(a.ID, 2*time.Second), mk(other.ID, 0)
		for _, c := range []keys.Credential{c2, c1, c3} {
			if err := s.CreateCredential(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Credential(ctx, c1.Info.ID)
		if err != nil || got.Info != c1.Info || got.Sealed.KeyID != c1.Sealed.KeyID || !slices.Equal(got.Sealed.Data, c1.Sealed.Data) || got.DeletedAt != nil {
			t.Fatalf("Credential = %+v, %v; want %+v", got, err, c1)
		}
		list, err := s.Credentials(ctx, a.ID)
		if err != nil || len(list) != 2 || list[0].Info != c1.Info || list[1].Info != c2.Info {
			t.Fatalf("Credentials = %+v, %v; want c1, c2", list, err)
		}
		if err := s.DeleteCredential(ctx, c1.Info.ID, at(time.Hour)); err != nil {
			t.Fatal(err)
		}
		list, err = s.Credentials(ctx, a.ID)
		if err != nil || len(list) != 1 || list[0].Info != c2.Info {
			t.Fatalf("Credentials after delete = %+v, %v; want c2", list, err)
		}

		tests := []struct {
			name string
			err  error
			want error
		}{
			{name: "deleted credential", err: second(s.Credential(ctx, c1.Info.ID)), want: keys.ErrCredentialNotFound},
			{name: "delete twice", err: s.DeleteCredential(ctx, c1.Info.ID, at(time.Hour)), want: keys.ErrCredentialNotFound},
			{name: "unknown credential", err: second(s.Credential(ctx, uuid.NewString())), want: keys.ErrCredentialNotFound},
			{name: "delete unknown", err: s.DeleteCredential(ctx, uuid.NewString(), at(0)), want: keys.ErrCredentialNotFound},
			{name: "list unknown account", err: second(s.Credentials(ctx, uuid.NewString())), want: keys.ErrAccountNotFound},
			{name: "create for unknown account", err: s.CreateCredential(ctx, mk(uuid.NewString(), 0)), want: keys.ErrAccountNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if !errors.Is(tt.err, tt.want) {
					t.Fatalf("err = %v, want %v", tt.err, tt.want)
				}
			})
		}
	})

	t.Run("cancelled context", func(t *testing.T) {
		s := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := s.CreateAccount(cctx, keys.Account{ID: uuid.NewString(), Tier: contract.TierFree, CreatedAt: at(0)})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func second[T any](_ T, err error) error { return err }

func assertGuards(t *testing.T, got, want contract.Guards) {
	t.Helper()
	eqDec := func(a, b *decimal.Decimal) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	if got.ReadOnly != want.ReadOnly || !slices.Equal(got.AllowedMarkets, want.AllowedMarkets) ||
		!eqDec(got.MaxOrderNotional, want.MaxOrderNotional) || !eqDec(got.MaxDailyNotional, want.MaxDailyNotional) ||
		got.MaxLeverage != want.MaxLeverage || !eqDec(got.MaxPositionNotional, want.MaxPositionNotional) {
		t.Fatalf("guards =\n%+v\nwant\n%+v", got, want)
	}
}

func assertKey(t *testing.T, got, want contract.KeyInfo) {
	t.Helper()
	eqTime := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	if got.ID != want.ID || got.AccountID != want.AccountID || got.Hash != want.Hash ||
		got.Display != want.Display || got.Env != want.Env || got.Tier != want.Tier ||
		!slices.Equal(got.AllowedOperations, want.AllowedOperations) ||
		!slices.Equal(got.AllowedExchanges, want.AllowedExchanges) ||
		!slices.Equal(got.AllowedCredentials, want.AllowedCredentials) ||
		!eqTime(got.ExpiresAt, want.ExpiresAt) || !eqTime(got.RevokedAt, want.RevokedAt) ||
		!got.CreatedAt.Equal(want.CreatedAt) {
		t.Fatalf("key =\n%+v\nwant\n%+v", got, want)
	}
}
