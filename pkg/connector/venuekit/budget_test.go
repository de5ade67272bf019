package venuekit_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// TestQuotasPaceTheReset: a budget the venue said is spent makes the next
// send wait until just after its reset, or answers rate-limited at once
// when that wait would pass the deadline.
func TestQuotasPaceTheReset(t *testing.T) {
	now := time.UnixMilli(1_780_000_000_000)
	var q venuekit.Quotas
	hdr := http.Header{}
	hdr.Set("Remaining", "0")
	hdr.Set("Reset", strconv.FormatInt(now.Add(3*time.Second).UnixMilli(), 10))
	q.Observe("k", hdr, "Remaining", "Reset")
	var waited time.Duration
	wait := func(_ context.Context, d time.Duration) error { waited = d; return nil }
	if err := venuekit.Pace(context.Background(), now, q.Wait("k", now), wait, "spent; retry in %d s"); err != nil || waited < 3*time.Second {
		t.Fatalf("no deadline: %v, waited %v", err, waited)
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(time.Second))
	defer cancel()
	ce, ok := contract.AsError(venuekit.Pace(ctx, now, q.Wait("k", now), wait, "spent; retry in %d s"))
	if !ok || ce.Reason != contract.ReasonUpstreamRateLimited || ce.RetryAfterSeconds != 4 {
		t.Fatalf("short deadline: %+v", ce)
	}
	if d := q.Wait("other", now); d != 0 {
		t.Fatalf("a key without a budget waits %v", d)
	}
	if d := q.Spent("k", now); d != 3*time.Second {
		t.Fatalf("Spent = %v, want the 3 s to the reset", d)
	}
}

// TestWeightGate: the used-weight header is the truth for the minute; past
// 90 % of the limit the next request waits for the next minute, and a ban
// holds everything until it ends.
func TestWeightGate(t *testing.T) {
	g := venuekit.NewWeightGate("X-Used", 100)
	now := time.Date(2026, 11, 27, 3, 0, 10, 0, time.UTC)
	hdr := http.Header{}
	hdr.Set("X-Used", "85")
	g.Observe(now, hdr)
	if wait, banned := g.Admit(now, 5); wait != 0 || banned != 0 {
		t.Fatalf("within budget: wait %v banned %v", wait, banned)
	}
	if wait, _ := g.Admit(now, 1); wait != 50*time.Second {
		t.Fatalf("over 90 %%: wait %v, want the 50 s to the next minute", wait)
	}
	g.Ban(now.Add(2 * time.Minute))
	if _, banned := g.Admit(now, 0); banned != 2*time.Minute {
		t.Fatalf("banned %v, want 2m", banned)
	}
	if d := venuekit.RetryAfter(now, http.StatusTeapot, http.Header{}, "banned until "+strconv.FormatInt(now.Add(time.Hour).UnixMilli(), 10)); d != time.Hour {
		t.Fatalf("418 with banned until: %v", d)
	}
}

// TestMemoExpires: a value is served for its ttl, then not; Forget drops it.
func TestMemoExpires(t *testing.T) {
	var m venuekit.Memo[bool]
	now := time.Now()
	m.Put("k", true, now)
	if v, ok := m.Get("k", now.Add(time.Minute), 5*time.Minute); !ok || !v {
		t.Fatal("fresh value not served")
	}
	if _, ok := m.Get("k", now.Add(5*time.Minute), 5*time.Minute); ok {
		t.Fatal("stale value served")
	}
	m.Forget("k")
	if _, ok := m.Get("k", now, time.Hour); ok {
		t.Fatal("forgotten value served")
	}
}
