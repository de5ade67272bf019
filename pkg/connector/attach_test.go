package connector

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// fillVenue holds a filled entry and counts the pairs placed.
type fillVenue struct {
	legsVenue
	pairs int
}

func (v *fillVenue) PlaceProtectionOrders(_ context.Context, _ Credential, p ProtectionRequest) (contract.ProtectionResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.pairs++
	return v.addPair(p.ClientOrderID, p.Size), nil
}

// addPair puts a pair's legs at the venue, as a placement would; under mu.
func (v *fillVenue) addPair(clientID string, size decimal.Decimal) contract.ProtectionResult {
	res := contract.ProtectionResult{TPOrderID: "id-" + clientID + "-tp", SLOrderID: "id-" + clientID + "-sl"}
	for _, leg := range []string{"-tp", "-sl"} {
		v.open["id-"+clientID+leg] = true
		v.orders[clientID+leg] = FoundOrder{Order: contract.Order{ID: "id-" + clientID + leg, Size: size,
			Status: contract.StatusPending, ReduceOnly: true, ClientOrderID: clientID + leg}}
	}
	return res
}

func newFillVenue() *fillVenue {
	v := &fillVenue{legsVenue: legsVenue{venueFake: venueFake{orders: map[string]FoundOrder{}}, open: map[string]bool{},
		position: true, cancels: map[string]int{}}}
	v.orders["entry-1"] = FoundOrder{Order: contract.Order{ID: "e1", Side: contract.Buy, Size: decimal.RequireFromString("0.01"),
		FilledSize: decimal.RequireFromString("0.01"), Status: contract.StatusFilled, ClientOrderID: "entry-1"}}
	return v
}

func attachingRuntime(v Adapter, store AttachStore) *Runtime {
	r := watchingRuntime(v, NewMemoryProtections())
	r.attached, r.attachKick = store, make(chan struct{}, 1)
	return r
}

func filledEntry(pending int) AttachedEntry {
	tp, sl := decimal.RequireFromString("70000"), decimal.RequireFromString("40000")
	return AttachedEntry{ID: "cred-1:entry-1", CredentialID: "cred-1", Market: "BTC-USD-PERP", EntryClientID: "entry-1",
		Side: contract.Long, TakeProfit: &tp, StopLoss: &sl, Pending: pending, Created: time.Now()}
}

// TestAttachedPairAfterCrash: a connector died after the entry filled;
// whether it died before placing the pair, or after placing it but before
// recording it, the next one ends with the pair placed once, sized to the
// fill, and forgets the entry.
func TestAttachedPairAfterCrash(t *testing.T) {
	for _, c := range []struct {
		name    string
		pending int
		placed  bool // the dead connector's pair stands at the venue
		want    int  // pairs the next connector places
	}{
		{"before the pair", 0, false, 1},
		{"while placing it, nothing reached the venue", 1, false, 1},
		{"after placing it, before recording it", 1, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newFillVenue()
			if c.placed {
				v.addPair(pairClientID("cred-1:entry-1", 1), decimal.RequireFromString("0.01"))
			}
			path := filepath.Join(t.TempDir(), "attached.json")
			dead, err := NewFileAttachments(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := dead.Put(context.Background(), filledEntry(c.pending)); err != nil {
				t.Fatal(err)
			}
			store, err := NewFileAttachments(path) // the next connector reads what the dead one wrote
			if err != nil {
				t.Fatal(err)
			}
			r := attachingRuntime(v, store)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for range 3 { // later checks place nothing more
				if _, err := r.syncLocked(ctx, "cred-1:entry-1", time.Second); err != nil {
					t.Fatal(err)
				}
			}
			if v.pairs != c.want {
				t.Fatalf("placed %d pairs, want %d", v.pairs, c.want)
			}
			if left, _ := store.List(ctx); len(left) != 0 {
				t.Fatalf("entry still kept: %+v", left)
			}
			watched, _ := r.protections.List(ctx)
			if len(watched) != 1 || watched[0].TPOrderID != "id-"+pairClientID("cred-1:entry-1", 1)+"-tp" {
				t.Fatalf("watched pairs %+v, want the one pair", watched)
			}
			if f := v.orders[pairClientID("cred-1:entry-1", 1)+"-sl"]; !f.Size.Equal(decimal.RequireFromString("0.01")) {
				t.Fatalf("stop-loss leg %+v, want size 0.01", f)
			}
		})
	}
}

// TestAttachedPairOnceAcrossReplicas: two connectors share the entries in
// Redis and both sync the filled entry; one pair is placed.
func TestAttachedPairOnceAcrossReplicas(t *testing.T) {
	rdb, prefix := testenv.RedisPrefix(t)
	store := NewRedisAttachments(rdb, prefix)
	v := newFillVenue()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := store.Put(ctx, filledEntry(0)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		r := attachingRuntime(v, store)
		wg.Add(1)
		go func() { defer wg.Done(); r.attachLoop(ctx, 10*time.Millisecond) }()
	}
	testenv.Poll(t, "the entry forgotten", 5*time.Second, func() error {
		if left, _ := store.List(ctx); len(left) != 0 {
			return errorf("%d entries kept", len(left))
		}
		return nil
	})
	time.Sleep(50 * time.Millisecond) // more checks
	cancel()
	wg.Wait()
	if v.pairs != 1 {
		t.Fatalf("placed %d pairs, want 1", v.pairs)
	}
}

// TestAttachedPairResized: the entry fills in two parts; the second pair
// covers the whole, the first pair's legs are cancelled once.
func TestAttachedPairResized(t *testing.T) {
	v := newFillVenue()
	half := v.orders["entry-1"]
	half.FilledSize, half.Status = decimal.RequireFromString("0.004"), contract.StatusOpen
	v.orders["entry-1"] = half
	r := attachingRuntime(v, NewMemoryAttachments())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.attached.Put(ctx, filledEntry(0))
	if _, err := r.syncLocked(ctx, "cred-1:entry-1", time.Second); err != nil {
		t.Fatal(err)
	}
	first := pairClientID("cred-1:entry-1", 1)
	if f := v.orders[first+"-tp"]; !f.Size.Equal(decimal.RequireFromString("0.004")) {
		t.Fatalf("first pair %+v, want size 0.004", f)
	}
	v.mu.Lock()
	v.orders["entry-1"] = newFillVenue().orders["entry-1"] // the rest filled
	v.mu.Unlock()
	for range 2 {
		if _, err := r.syncLocked(ctx, "cred-1:entry-1", time.Second); err != nil {
			t.Fatal(err)
		}
	}
	second := pairClientID("cred-1:entry-1", 2)
	if f := v.orders[second+"-sl"]; !f.Size.Equal(decimal.RequireFromString("0.01")) || v.pairs != 2 {
		t.Fatalf("second pair %+v after %d pairs, want size 0.01 after 2", f, v.pairs)
	}
	if v.cancels["id-"+first+"-tp"] != 1 || v.cancels["id-"+first+"-sl"] != 1 || len(v.cancels) != 2 {
		t.Fatalf("cancels %v, want the first pair's legs once", v.cancels)
	}
	if left, _ := r.attached.List(ctx); len(left) != 0 {
		t.Fatalf("entry still kept: %+v", left)
	}
}

// restingVenue lists two resting entries by clientOrderId and counts
// look-ups.
type restingVenue struct {
	fillVenue
	lookups int
}

func (v *restingVenue) GetOrders(context.Context, Credential, *Market) (contract.OrdersResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out contract.OrdersResult
	for _, f := range v.orders {
		if f.Status == contract.StatusOpen {
			out.Orders = append(out.Orders, f.Order)
		}
	}
	return out, nil
}

func (v *restingVenue) FindOrder(ctx context.Context, c Credential, m Market, id string) (FoundOrder, bool, error) {
	v.mu.Lock()
	v.lookups++
	v.mu.Unlock()
	return v.fillVenue.FindOrder(ctx, c, m, id)
}

// TestAttachedRestingEntriesListedNotLookedUp: entries resting unfilled
// cost one order listing per tick, not a look-up each; once one fills it
// is looked up and gets its pair.
func TestAttachedRestingEntriesListedNotLookedUp(t *testing.T) {
	v := &restingVenue{fillVenue: *newFillVenue()}
	store := NewMemoryAttachments()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, id := range []string{"entry-1", "entry-2"} {
		v.orders[id] = FoundOrder{Order: contract.Order{ID: "id-" + id, Side: contract.Buy, Size: decimal.RequireFromString("0.01"),
			Status: contract.StatusOpen, ClientOrderID: id}}
		e := filledEntry(0)
		e.ID, e.EntryClientID = "cred-1:"+id, id
		_ = store.Put(ctx, e)
	}
	r := attachingRuntime(v, store)
	done := make(chan struct{})
	go func() { defer close(done); r.attachLoop(ctx, 10*time.Millisecond) }()
	time.Sleep(200 * time.Millisecond)
	v.mu.Lock()
	if v.lookups != 0 || v.pairs != 0 {
		v.mu.Unlock()
		t.Fatalf("%d look-ups and %d pairs for resting entries, want none", v.lookups, v.pairs)
	}
	f := v.orders["entry-2"]
	f.FilledSize, f.Status = f.Size, contract.StatusFilled
	v.orders["entry-2"] = f
	v.mu.Unlock()
	testenv.Poll(t, "the filled entry's pair", 5*time.Second, func() error {
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.pairs != 1 {
			return errorf("%d pairs", v.pairs)
		}
		return nil
	})
	cancel()
	<-done
}

// TestAttachedKickedByFillEvents: a fill event syncs the entries at once,
// long before the next tick.
func TestAttachedKickedByFillEvents(t *testing.T) {
	v := newFillVenue()
	r := attachingRuntime(v, NewMemoryAttachments())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); r.attachLoop(ctx, time.Hour) }()
	time.Sleep(100 * time.Millisecond) // the loop's pass at start is over
	_ = r.attached.Put(ctx, filledEntry(0))
	r.attachOnEvent("cred-1", contract.OrderEvent{FilledSize: decimal.Zero, Status: contract.StatusOpen}) // nothing filled: no kick
	time.Sleep(100 * time.Millisecond)
	v.mu.Lock()
	if v.pairs != 0 {
		t.Fatalf("an order event without a fill placed %d pairs", v.pairs)
	}
	v.mu.Unlock()
	r.attachOnEvent("cred-1", contract.FillEvent{})
	testenv.Poll(t, "the pair after the fill event", 2*time.Second, func() error {
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.pairs != 1 {
			return errorf("%d pairs", v.pairs)
		}
		return nil
	})
	cancel()
	<-done
}

// TestAttachedPolledOnlyWhileFeedUnhealthy: the loop looks its entries up
// once at start; while the credential's feed is healthy only its events
// make it look again, and without a healthy feed it looks every tick.
func TestAttachedPolledOnlyWhileFeedUnhealthy(t *testing.T) {
	v := &restingVenue{fillVenue: *newFillVenue()}
	v.orders["entry-1"] = FoundOrder{Order: contract.Order{ID: "id-entry-1", Side: contract.Buy, Size: decimal.RequireFromString("0.01"),
		Status: contract.StatusOpen, ClientOrderID: "entry-1"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := NewMemoryAttachments()
	_ = store.Put(ctx, filledEntry(0))
	r := attachingRuntime(v, store)
	stubFeeds(r, "cred-1", true)
	lookups := func() int {
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.lookups
	}
	done := make(chan struct{})
	go func() { defer close(done); r.attachLoop(ctx, 10*time.Millisecond) }()
	testenv.Poll(t, "the look-up at start", 2*time.Second, func() error {
		if n := lookups(); n != 1 {
			return errorf("%d look-ups", n)
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond) // 20 ticks
	if n := lookups(); n != 1 {
		t.Fatalf("%d look-ups while the feed was healthy, want the one at start", n)
	}
	r.attachOnEvent("cred-2", contract.FillEvent{}) // another credential's fill
	r.attachOnEvent("cred-1", contract.FillEvent{})
	testenv.Poll(t, "the look-up on the fill event", 2*time.Second, func() error {
		if n := lookups(); n != 2 {
			return errorf("%d look-ups", n)
		}
		return nil
	})
	time.Sleep(100 * time.Millisecond)
	if n := lookups(); n != 2 {
		t.Fatalf("%d look-ups after one fill event, want 2", n)
	}
	stubFeeds(r, "cred-1", false)
	testenv.Poll(t, "look-ups every tick without a healthy feed", 2*time.Second, func() error {
		if n := lookups(); n < 5 {
			return errorf("%d look-ups", n)
		}
		return nil
	})
	cancel()
	<-done
}

// TestMarketEntryAnswerAfterLoopPlacedPair: the account feed's fill kicked
// the loop, which placed the pair and forgot the filled entry before the
// placement answered; the answer still names the pair, read back from the
// venue, and places no second one.
func TestMarketEntryAnswerAfterLoopPlacedPair(t *testing.T) {
	v := newFillVenue()
	r := attachingRuntime(v, NewMemoryAttachments())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e := filledEntry(0)
	_ = r.attached.Put(ctx, e)
	if _, err := r.syncLocked(ctx, e.ID, 0); err != nil { // the loop
		t.Fatal(err)
	}
	if left, _ := r.attached.List(ctx); len(left) != 0 {
		t.Fatalf("the loop kept the covered entry: %+v", left)
	}
	o := OrderRequest{Market: Market{Canonical: "BTC-USD-PERP"}, Side: contract.Buy, Size: decimal.RequireFromString("0.01"),
		ClientOrderID: "entry-1", Type: MarketType, TakeProfit: e.TakeProfit, StopLoss: e.StopLoss}
	p := r.protectNow(ctx, Credential{CredentialInfo: contract.CredentialInfo{ID: "cred-1"}}, o)
	cid := pairClientID(e.ID, 1)
	if p == nil || p.Size == nil || !p.Size.Equal(o.Size) || p.TPOrderID != "id-"+cid+"-tp" || p.SLOrderID != "id-"+cid+"-sl" {
		t.Fatalf("answer's protection %+v, want the pair the loop placed", p)
	}
	if v.pairs != 1 {
		t.Fatalf("placed %d pairs, want 1", v.pairs)
	}
}
