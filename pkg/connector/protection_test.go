package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// legsVenue lists some open orders and a position, and counts cancels.
type legsVenue struct {
	venueFake
	mu       sync.Mutex
	open     map[string]bool
	position bool
	cancels  map[string]int
}

func (v *legsVenue) GetOrders(context.Context, Credential, *Market) (contract.OrdersResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out contract.OrdersResult
	for id, ok := range v.open {
		if ok {
			out.Orders = append(out.Orders, contract.Order{ID: id, Status: contract.StatusPending})
		}
	}
	return out, nil
}

func (v *legsVenue) GetPositions(context.Context, Credential, *Market) (contract.PositionsResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.position {
		return contract.PositionsResult{}, nil
	}
	return contract.PositionsResult{Positions: []contract.Position{{Market: "BTC", Size: decimal.RequireFromString("0.01")}}}, nil
}

func (v *legsVenue) CancelOrder(_ context.Context, _ Credential, id string, _ *Market) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cancels[id]++
	v.open[id] = false
	return nil
}

func watchingRuntime(v Adapter, store ProtectionStore) *Runtime {
	cfg := DefaultConfig()
	cfg.Protections = store
	cfg = cfg.withDefaults()
	r := &Runtime{cfg: cfg, adapter: v, idem: NewMemoryIdempotency(nil), log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		markets: newMarketCache(time.Minute, time.Now), protections: store,
		secrets: newSecretCache(nil, "", time.Hour, time.Now)}
	r.secrets.entries["cred-1"] = secretEntry{cred: Credential{CredentialInfo: contract.CredentialInfo{ID: "cred-1", Environment: contract.Testnet}},
		expires: time.Now().Add(time.Hour)}
	return r
}

// TestWatchedPairSiblingCancelledOnce: two replicas share the watched
// pairs; when the take-profit has fired, the stop-loss is cancelled, once.
func TestWatchedPairSiblingCancelledOnce(t *testing.T) {
	rdb, prefix := testenv.RedisPrefix(t)
	store := NewRedisProtections(rdb, prefix)
	v := &legsVenue{venueFake: venueFake{orders: map[string]FoundOrder{}}, open: map[string]bool{"sl-1": true}, position: true,
		cancels: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := watchingRuntime(v, store), watchingRuntime(v, store)
	m, _ := a.markets.resolve(ctx, v, Credential{CredentialInfo: contract.CredentialInfo{ID: "cred-1"}}, "BTC")
	a.watchProtection(ctx, Credential{CredentialInfo: contract.CredentialInfo{ID: "cred-1"}}, m, "p1",
		contract.ProtectionResult{TPOrderID: "tp-1", SLOrderID: "sl-1"}) // tp-1 is no longer open: it fired
	var wg sync.WaitGroup
	for _, r := range []*Runtime{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); r.watchLoop(ctx, 20*time.Millisecond) }()
	}
	testenv.Poll(t, "the stop-loss cancelled", 5*time.Second, func() error {
		if pairs, _ := store.List(ctx); len(pairs) != 0 {
			return errorf("%d pairs still watched", len(pairs))
		}
		return nil
	})
	cancel()
	wg.Wait()
	if v.cancels["sl-1"] != 1 || len(v.cancels) != 1 {
		t.Fatalf("cancels %v, want sl-1 once", v.cancels)
	}
}

// TestWatchedPairPositionClosed: both legs wait, then the position closes
// by hand: both are cancelled. Before the position is seen, nothing is.
func TestWatchedPairPositionClosed(t *testing.T) {
	store := NewMemoryProtections()
	v := &legsVenue{venueFake: venueFake{orders: map[string]FoundOrder{}}, open: map[string]bool{"tp-2": true, "sl-2": true},
		cancels: map[string]int{}}
	r := watchingRuntime(v, store)
	ctx := context.Background()
	cred := Credential{CredentialInfo: contract.CredentialInfo{ID: "cred-1"}}
	m, _ := r.markets.resolve(ctx, v, cred, "BTC")
	r.watchProtection(ctx, cred, m, "p2", contract.ProtectionResult{TPOrderID: "tp-2", SLOrderID: "sl-2"})
	check := func() {
		pairs, _ := store.List(ctx)
		for _, p := range pairs {
			if err := r.checkPair(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	check() // no position yet (the entry may still be filling): keep both
	if len(v.cancels) != 0 {
		t.Fatalf("cancelled %v before the position existed", v.cancels)
	}
	v.position = true
	check()
	v.position = false // closed by hand
	check()
	if v.cancels["tp-2"] != 1 || v.cancels["sl-2"] != 1 {
		t.Fatalf("cancels %v, want both legs", v.cancels)
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// pairVenue places protection pairs as two orders it remembers by client
// id, and counts cancels.
type pairVenue struct {
	legsVenue
}

func (v *pairVenue) PlaceProtectionOrders(ctx context.Context, _ Credential, p ProtectionRequest) (contract.ProtectionResult, error) {
	tp, _ := v.place(ctx, OrderRequest{ClientOrderID: p.ClientOrderID + "-tp"})
	sl, _ := v.place(ctx, OrderRequest{ClientOrderID: p.ClientOrderID + "-sl"})
	return contract.ProtectionResult{TPOrderID: tp.ID, SLOrderID: sl.ID}, nil
}

func (v *pairVenue) CancelOrder(ctx context.Context, c Credential, id string, m *Market) error {
	v.venueFake.mu.Lock()
	for cid, f := range v.orders {
		if f.ID == id {
			delete(v.orders, cid)
		}
	}
	v.venueFake.mu.Unlock()
	return v.legsVenue.CancelOrder(ctx, c, id, m)
}

func (v *pairVenue) LinksProtection() bool { return true }

// TestHalfPairRolledBackBeforeRetry: a protection placement died with only
// its take-profit at the venue; the retry cancels that leg and places one
// whole pair, not a second take-profit.
func TestHalfPairRolledBackBeforeRetry(t *testing.T) {
	v := &pairVenue{legsVenue{venueFake: venueFake{orders: map[string]FoundOrder{}}, open: map[string]bool{}, cancels: map[string]int{}}}
	idem := NewMemoryIdempotency(nil)
	d := newDispatch(&v.venueFake, idem)
	d.r.adapter = v
	ctx := context.Background()
	p := &contract.ProtectionParams{Market: "BTC", Side: contract.Long, Size: decimal.RequireFromString("0.01"),
		EntryPrice: decimal.RequireFromString("60000"), TPPercent: decimal.RequireFromString("5"),
		SLPercent: decimal.RequireFromString("5"), ClientOrderID: "p9"}
	// The dead placement: a stale claim, and only its take-profit reached the venue.
	m, _ := d.market(ctx, "BTC")
	tp, sl := decimal.RequireFromString("63000"), decimal.RequireFromString("57000")
	fp := protectionFingerprint(ProtectionRequest{Market: m, PositionSide: contract.Long, Size: p.Size, TakeProfit: &tp, StopLoss: &sl})
	if _, claimed, _ := idem.Claim(ctx, "cred-1:p9", Record{Fingerprint: fp, Deadline: time.Now().Add(-time.Second)}); !claimed {
		t.Fatal("claim")
	}
	_, _ = v.place(ctx, OrderRequest{ClientOrderID: "p9-tp"})
	op, _ := contract.Lookup(contract.OpPlaceProtectionOrders)
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res, err := d.run(rctx, op, p)
	if err != nil {
		t.Fatal(err)
	}
	if v.cancels["id-p9-tp"] != 1 || len(v.orders) != 2 || !strings.Contains(string(res.(json.RawMessage)), `"slOrderId":"id-p9-sl"`) {
		t.Fatalf("cancels %v, orders %v, result %s: want the half pair cancelled and one whole pair placed", v.cancels, v.orders, res)
	}
}
