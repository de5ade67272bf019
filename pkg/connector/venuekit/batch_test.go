package venuekit_test

import (
	"regexp"
	"testing"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// TestPlaceChunks: an order the precheck refuses is rejected and never
// sent; a call failing before anything was placed fails the batch; after
// a placement, a timeout leaves only its chunk UNKNOWN and a refusal
// rejects only its chunk.
func TestPlaceChunks(t *testing.T) {
	orders := make([]connector.OrderRequest, 7)
	for i := range orders {
		orders[i].ClientOrderID = "ok"
	}
	orders[1].ClientOrderID = "bad id"
	rule := venuekit.ClientIDRule{Venue: "X", Pattern: regexp.MustCompile(`^[a-z]+$`), Takes: "letters"}
	out, send := venuekit.Prechecked(orders, func(o connector.OrderRequest) error { return rule.Check(o.ClientOrderID) })
	if len(send) != 6 || out[1].Status != contract.StatusRejected || out[1].Error == nil || out[1].Error.Code != contract.CodeInvalidRequest {
		t.Fatalf("precheck: send %v, out[1] %+v", send, out[1])
	}
	refused := contract.Upstream(contract.ReasonInvalidOrder, "", "", "refused")
	if _, err := venuekit.PlaceChunks(out, send, 2, func([]int) (bool, error) { return false, refused }); err != refused {
		t.Fatalf("first call failing: %v, want the call's error", err)
	}
	calls := 0
	got, err := venuekit.PlaceChunks(out, send, 2, func(chunk []int) (bool, error) {
		calls++
		switch calls {
		case 1:
			for _, i := range chunk {
				out[i] = contract.BatchOrderResult{OrderID: "1", Status: contract.StatusOpen}
			}
			return venuekit.AnyPlaced(out, chunk), nil
		case 2:
			return false, contract.Errorf(contract.CodeExchangeTimeout, "timeout")
		}
		return false, refused
	})
	want := []string{contract.StatusOpen, contract.StatusRejected, contract.StatusOpen, contract.StatusUnknown, contract.StatusUnknown, contract.StatusRejected, contract.StatusRejected}
	for i, w := range want {
		if err != nil || got[i].Status != w {
			t.Fatalf("order %d: %v %+v, want %s", i, err, got[i], w)
		}
	}
}
