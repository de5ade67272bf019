package connector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// leverageVenue is one venue account whose leverage a setLeverage or the
// venue's own interface changes; reads counts leverage reads. Methods it
// does not override panic through the nil embedded interface.
type leverageVenue struct {
	connector.Adapter
	mu    sync.Mutex
	lev   int
	reads int
}

func (v *leverageVenue) Exchange() contract.Exchange { return contract.Paper }

func (v *leverageVenue) Markets(context.Context, connector.Credential) ([]connector.Market, error) {
	return []connector.Market{{Canonical: "BTC-USD-PERP", Native: "BTC", Base: "BTC", Quote: "USD", Multiplier: 1,
		TickSize: decimal.RequireFromString("0.1"), LotSize: decimal.RequireFromString("0.001")}}, nil
}

func (v *leverageVenue) GetLeverage(context.Context, connector.Credential, connector.Market) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.reads++
	return v.lev, nil
}

func (v *leverageVenue) SetLeverage(_ context.Context, _ connector.Credential, _ connector.Market, lev int) (int, error) {
	v.set(lev)
	return lev, nil
}

// set changes the leverage as the venue's own interface would.
func (v *leverageVenue) set(lev int) {
	v.mu.Lock()
	v.lev = lev
	v.mu.Unlock()
}

func (v *leverageVenue) PlaceLimitOrder(_ context.Context, _ connector.Credential, o connector.OrderRequest) (contract.LimitOrderResult, error) {
	return contract.LimitOrderResult{OrderID: "id-" + o.ClientOrderID, Side: o.Side, Size: o.Size, Price: o.Price, Status: contract.StatusOpen}, nil
}

// TestMaxLeverageOnPlacementsAcrossReplicas: a key's maxLeverage refuses
// orders that can add exposure while the market's leverage is above it;
// the leverage read is cached, and a setLeverage through either replica
// drops the cache of both at once.
func TestMaxLeverageOnPlacementsAcrossReplicas(t *testing.T) {
	v := &leverageVenue{lev: 10}
	opts := connectortest.Options{URL: testenv.EmbeddedNATS(t).ClientURL(), Subjects: contract.NewSubjects(testenv.Prefix(t)), Env: contract.Testnet}
	a, b := connectortest.Serve(t, v, opts), connectortest.Serve(t, v, opts)
	guards := &contract.Guards{MaxLeverage: 5}
	n := 0
	place := func(r *connectortest.Replica, reduceOnly bool) error {
		n++
		p, _ := json.Marshal(contract.LimitOrderParams{Market: "BTC", Side: contract.Buy, Size: decimal.RequireFromString("0.01"),
			Price: decimal.RequireFromString("50000"), ReduceOnly: reduceOnly, ClientOrderID: fmt.Sprintf("lev-%d", n)})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := r.Runtime.Handle(ctx, contract.ConnectorRequest{RequestID: "r", Operation: contract.OpPlaceLimitOrder, AccountID: "acct-1",
			Credential: contract.CredentialInfo{ID: "cred-1"}, KeyID: "key-1", Guards: guards, Params: p})
		return err
	}
	refused := func(err error) bool {
		ce, ok := contract.AsError(err)
		return ok && ce.Code == contract.CodeLeverageExceeded
	}
	setLeverage := func(r *connectortest.Replica, lev int) {
		p, _ := json.Marshal(contract.LeverageParams{Market: "BTC", Leverage: lev})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := r.Runtime.Handle(ctx, contract.ConnectorRequest{RequestID: "r", Operation: contract.OpSetLeverage, AccountID: "acct-1",
			Credential: contract.CredentialInfo{ID: "cred-1"}, Params: p}); err != nil {
			t.Fatalf("setLeverage %d: %v", lev, err)
		}
	}
	for name, r := range map[string]*connectortest.Replica{"a": a, "b": b} {
		if err := place(r, false); !refused(err) {
			t.Fatalf("replica %s: an order at 10x under maxLeverage 5 answered %v, want LEVERAGE_EXCEEDED", name, err)
		}
	}
	if err := place(a, true); err != nil {
		t.Fatalf("a reduce-only order at 10x: %v", err)
	}
	// A change in the venue's own interface is seen once the cache expires,
	// not at once: the read is cached.
	reads := v.reads
	v.set(3)
	if err := place(a, false); !refused(err) || v.reads != reads {
		t.Fatalf("with the leverage cached: %v after %d more reads", err, v.reads-reads)
	}
	// setLeverage through a drops the cache of b too.
	setLeverage(a, 5)
	if err := place(a, false); err != nil {
		t.Fatalf("replica a after setLeverage 5: %v", err)
	}
	connectortest.Eventually(t, time.Second, "replica b sees setLeverage 5", func() bool { return place(b, false) == nil })
	setLeverage(b, 10)
	connectortest.Eventually(t, time.Second, "replica a sees setLeverage 10", func() bool { return refused(place(a, false)) })
}
