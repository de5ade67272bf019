package edge

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

// TestUsageCounterDays: counts on either side of UTC midnight, in any
// order and from any zone, land on their own UTC day.
func TestUsageCounterDays(t *testing.T) {
	u := newUsageCounter()
	before := time.Date(2026, 11, 24, 23, 59, 59, 0, time.UTC)
	after := before.Add(time.Second)
	tokyo := time.FixedZone("UTC+9", 9*3600)
	u.add(before, "k", "getBalance", true)
	u.add(after.In(tokyo), "k", "getBalance", true)
	u.add(before.In(tokyo), "k", "getBalance", false)
	u.add(after, "k", "", false)
	got := u.take()
	slices.SortFunc(got, func(a, b contract.UsageEntry) int {
		return cmp.Or(cmp.Compare(a.Day, b.Day), cmp.Compare(a.Operation, b.Operation))
	})
	want := []contract.UsageEntry{
		{KeyID: "k", Day: "2026-11-24", Operation: "getBalance", OK: 1, Failed: 1},
		{KeyID: "k", Day: "2026-11-25", Operation: "getBalance", OK: 1},
		{KeyID: "k", Day: "2026-11-25", Operation: contract.UsageInvalidOperation, Failed: 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}
