package paper

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// TestAmendOrder: an amendment changes a live order in place (same id),
// refuses what does not apply or is off the steps, and survives a replay
// of the journal.
func TestAmendOrder(t *testing.T) {
	clock := testenv.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	j := &memJournal{}
	e, err := Reopen(Config{Seed: 7, Now: clock.Now}, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := decimal.RequireFromString
	o, err := e.PlaceOrder("alice", OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: d("0.01"), Price: d("40000"), ClientOrderID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.AmendOrder("alice", o.ID, Amend{Size: d("0.03"), Price: d("41000")})
	if err != nil || got.ID != o.ID || !got.Size.Equal(d("0.03")) || !got.Price.Equal(d("41000")) || got.ClientOrderID != "a1" {
		t.Fatalf("amend: %+v %v", got, err)
	}
	for _, bad := range []Amend{{TriggerPrice: d("39000")}, {Price: d("41000.001")}, {Size: d("0.0001")}} {
		if _, err := e.AmendOrder("alice", o.ID, bad); !errors.Is(err, ErrInvalidOrder) {
			t.Errorf("amend %+v: want ErrInvalidOrder, got %v", bad, err)
		}
	}
	if _, err := e.CancelOrder("alice", o.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AmendOrder("alice", o.ID, Amend{Size: d("0.02")}); !errors.Is(err, ErrOrderClosed) {
		t.Fatalf("amend of a cancelled order: want ErrOrderClosed, got %v", err)
	}
	o2, err := e.PlaceOrder("alice", OrderRequest{Market: "BTC-USD-PERP", Side: Buy, Type: Limit, Size: d("0.01"), Price: d("40000")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AmendOrder("alice", o2.ID, Amend{Size: d("0.02")}); err != nil {
		t.Fatal(err)
	}
	before, _ := e.OpenOrders("alice", "")
	again, err := Reopen(Config{Seed: 7, Now: clock.Now}, j, j.records)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := again.OpenOrders("alice", "")
	if !reflect.DeepEqual(before, after) || len(after) != 1 || !after[0].Size.Equal(d("0.02")) {
		t.Fatalf("after replay the open orders are %+v, want %+v", after, before)
	}
}
