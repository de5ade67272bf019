package connector

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// venueFake is an adapter whose placements can hang or fail after the
// order reached the "venue", which remembers orders by client id. Methods
// it does not override panic through the nil embedded interface.
type venueFake struct {
	Adapter
	mu      sync.Mutex
	orders  map[string]FoundOrder
	placed  int
	hang    bool  // place the order, then wait for the deadline
	failErr error // place the order, then answer this error
}

func (v *venueFake) Exchange() contract.Exchange { return contract.Paper }

func (v *venueFake) Markets(context.Context, Credential) ([]Market, error) {
	return []Market{{Canonical: "BTC-USD-PERP", Native: "BTC", Base: "BTC", Quote: "USD", Multiplier: 1,
		TickSize: decimal.RequireFromString("0.1"), LotSize: decimal.RequireFromString("0.001")}}, nil
}

func (v *venueFake) place(ctx context.Context, o OrderRequest) (FoundOrder, error) {
	v.mu.Lock()
	v.placed++
	f := FoundOrder{Order: contract.Order{ID: "id-" + o.ClientOrderID, Side: o.Side, Size: o.Size, Price: o.Price,
		Status: contract.StatusOpen, ClientOrderID: o.ClientOrderID}}
	v.orders[o.ClientOrderID] = f
	hang, failErr := v.hang, v.failErr
	v.mu.Unlock()
	if hang {
		<-ctx.Done()
		return f, ctx.Err()
	}
	return f, failErr
}

func (v *venueFake) PlaceLimitOrder(ctx context.Context, _ Credential, o OrderRequest) (contract.LimitOrderResult, error) {
	f, err := v.place(ctx, o)
	return contract.LimitOrderResult{OrderID: f.ID, Side: o.Side, Size: o.Size, Price: o.Price, Status: f.Status}, err
}

func (v *venueFake) PlaceBatchOrder(ctx context.Context, _ Credential, orders []OrderRequest) ([]contract.BatchOrderResult, error) {
	for i, o := range orders {
		if i == 1 { // the call dies after the first order reached the venue
			return nil, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "venue answered HTTP 502")
		}
		if _, err := v.place(ctx, o); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (v *venueFake) FindOrder(_ context.Context, _ Credential, _ Market, id string) (FoundOrder, bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	f, ok := v.orders[id]
	return f, ok, nil
}

func newDispatch(v *venueFake, idem IdempotencyStore) dispatch {
	r := &Runtime{cfg: DefaultConfig(), adapter: v, idem: idem, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		markets: newMarketCache(time.Minute, time.Now)}
	return dispatch{r: r, cred: Credential{CredentialInfo: contract.CredentialInfo{ID: "cred-1", Environment: contract.Testnet}}}
}

func limit(id, size string) *contract.LimitOrderParams {
	return &contract.LimitOrderParams{Market: "BTC", Side: contract.Buy, Size: decimal.RequireFromString(size),
		Price: decimal.RequireFromString("50000"), ClientOrderID: id}
}

var limitOp, _ = contract.Lookup(contract.OpPlaceLimitOrder)

func TestSameClientOrderIDOtherOrderConflicts(t *testing.T) {
	v := &venueFake{orders: map[string]FoundOrder{}}
	d := newDispatch(v, NewMemoryIdempotency(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := d.run(ctx, limitOp, limit("a1", "0.01")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.run(ctx, limitOp, limit("a1", "0.01")); err != nil {
		t.Fatalf("same order again: %v", err)
	}
	_, err := d.run(ctx, limitOp, limit("a1", "0.02"))
	ce, _ := contract.AsError(err)
	if ce.Code != contract.CodeIdempotencyConflict || !strings.Contains(ce.Message, "size 0.02 (first 0.01)") {
		t.Fatalf("got %v, want IDEMPOTENCY_CONFLICT naming size", err)
	}
	if v.placed != 1 {
		t.Fatalf("placed %d orders, want 1", v.placed)
	}
}

// TestTimeoutReconciled: the venue took the order but did not answer in
// time; the connector looks it up before its own deadline and answers it.
func TestTimeoutReconciled(t *testing.T) {
	v := &venueFake{orders: map[string]FoundOrder{}, hang: true}
	d := newDispatch(v, NewMemoryIdempotency(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	res, err := d.run(ctx, limitOp, limit("t1", "0.01"))
	if err != nil {
		t.Fatalf("reconciled placement failed: %v", err)
	}
	var lr contract.LimitOrderResult
	_ = json.Unmarshal(res.(json.RawMessage), &lr)
	if lr.OrderID != "id-t1" || lr.Status != contract.StatusOpen || ctx.Err() != nil {
		t.Fatalf("result %+v, ctx %v", lr, ctx.Err())
	}
}

// TestUpstream5xxReconciled: a 502 after the venue took the order is
// answered with the order, not the error.
func TestUpstream5xxReconciled(t *testing.T) {
	v := &venueFake{orders: map[string]FoundOrder{}, failErr: contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "HTTP 502")}
	d := newDispatch(v, NewMemoryIdempotency(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := d.run(ctx, limitOp, limit("u1", "0.01")); err != nil {
		t.Fatalf("got %v, want the order found at the venue", err)
	}
}

// TestStaleClaimResolved: a placement whose connector died left a pending
// claim; once its deadline passed, a retry finds the order at the venue
// instead of answering EXCHANGE_TIMEOUT or placing it twice.
func TestStaleClaimResolved(t *testing.T) {
	v := &venueFake{orders: map[string]FoundOrder{}}
	idem := NewMemoryIdempotency(nil)
	d := newDispatch(v, idem)
	ctx := context.Background()
	// The dead placement: claimed with a deadline now past, order at the venue.
	o := OrderRequest{Type: Limit, Side: contract.Buy, Size: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000"), ClientOrderID: "k1"}
	o.Market, _ = d.market(ctx, "BTC")
	if _, claimed, _ := idem.Claim(ctx, "cred-1:k1", Record{Fingerprint: orderFingerprint(o), Deadline: time.Now().Add(-time.Second)}); !claimed {
		t.Fatal("claim")
	}
	_, _ = v.place(ctx, o)
	// Another dead placement that never reached the venue.
	o.ClientOrderID = "k2"
	if _, claimed, _ := idem.Claim(ctx, "cred-1:k2", Record{Fingerprint: orderFingerprint(o), Deadline: time.Now().Add(-time.Second)}); !claimed {
		t.Fatal("claim")
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start := time.Now()
	res, err := d.run(rctx, limitOp, limit("k1", "0.01"))
	if err != nil || !strings.Contains(string(res.(json.RawMessage)), `"orderId":"id-k1"`) || time.Since(start) > time.Second {
		t.Fatalf("retry of k1: %s %v after %s", res, err, time.Since(start))
	}
	if res, err := d.run(rctx, limitOp, limit("k2", "0.01")); err != nil || !strings.Contains(string(res.(json.RawMessage)), `"orderId":"id-k2"`) {
		t.Fatalf("retry of k2: %s %v", res, err)
	}
	if v.placed != 2 {
		t.Fatalf("venue saw %d placements, want 2 (k1 once, k2 once)", v.placed)
	}
}

// TestBatchChunk5xxIsUnknownNotRejected: orders of a batch call that
// failed upstream are reconciled or UNKNOWN, never REJECTED.
func TestBatchChunk5xxIsUnknownNotRejected(t *testing.T) {
	v := &venueFake{orders: map[string]FoundOrder{}}
	d := newDispatch(v, NewMemoryIdempotency(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p := &contract.BatchOrderParams{}
	for _, id := range []string{"b1", "b2", "b3"} {
		p.Orders = append(p.Orders, contract.BatchOrder{Market: "BTC", Side: contract.Buy, Size: decimal.RequireFromString("0.01"),
			Price: decimal.RequireFromString("50000"), ClientOrderID: id})
	}
	op, _ := contract.Lookup(contract.OpPlaceBatchOrder)
	res, err := d.run(ctx, op, p)
	if err != nil {
		t.Fatal(err)
	}
	got := res.(contract.BatchResult).Results
	if got[0].Status != contract.StatusOpen || got[0].OrderID != "id-b1" {
		t.Errorf("b1 (at the venue) = %+v, want its reconciled state", got[0])
	}
	for _, r := range got[1:] {
		if r.Status != contract.StatusUnknown || r.Error == nil {
			t.Errorf("%s = %+v, want UNKNOWN with the upstream error", r.ClientOrderID, r)
		}
	}
}

// lookupFails is a venue whose look-ups fail with err until told otherwise.
type lookupFails struct {
	*venueFake
	err error
}

func (v *lookupFails) FindOrder(ctx context.Context, c Credential, m Market, id string) (FoundOrder, bool, error) {
	if v.err != nil {
		return FoundOrder{}, false, v.err
	}
	return v.venueFake.FindOrder(ctx, c, m, id)
}

// TestLookupFailureKeepsClaim: a placement timed out and its look-up was
// refused (rate limited): the claim stays, so no retry places a second
// order, and once the venue answers the retry gets the one order.
func TestLookupFailureKeepsClaim(t *testing.T) {
	inner := &venueFake{orders: map[string]FoundOrder{}, hang: true}
	v := &lookupFails{venueFake: inner, err: contract.Upstream(contract.ReasonUpstreamRateLimited, "429", "", "slow down")}
	d := newDispatch(inner, NewMemoryIdempotency(nil))
	d.r.adapter = v
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := d.run(ctx, limitOp, limit("rl-1", "0.01"))
	cancel()
	if ce, _ := contract.AsError(err); err == nil || !strings.Contains(ce.Message, "state is unknown") {
		t.Fatalf("first attempt: %v, want the state unknown", err)
	}
	inner.hang = false
	retry, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := d.run(retry, limitOp, limit("rl-1", "0.01")); err == nil {
		t.Fatal("the retry placed while the earlier order could not be looked up")
	}
	v.err = nil
	res, err := d.run(retry, limitOp, limit("rl-1", "0.01"))
	if err != nil || !strings.Contains(string(res.(json.RawMessage)), `"orderId":"id-rl-1"`) {
		t.Fatalf("retry once the venue answers: %s %v", res, err)
	}
	if inner.placed != 1 {
		t.Fatalf("placed %d orders, want 1", inner.placed)
	}
}
