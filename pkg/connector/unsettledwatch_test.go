package connector

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// hiddenVenue takes orders but does not show them to look-ups while
// hidden (a venue's read path behind its write path); it counts look-ups.
type hiddenVenue struct {
	venueFake
	hidden bool
	finds  int
}

func (v *hiddenVenue) FindOrder(ctx context.Context, c Credential, m Market, id string) (FoundOrder, bool, error) {
	v.mu.Lock()
	v.finds++
	hidden := v.hidden
	v.mu.Unlock()
	if hidden {
		return FoundOrder{}, false, nil
	}
	return v.venueFake.FindOrder(ctx, c, m, id)
}

func (v *hiddenVenue) counts() (finds, placed int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.finds, v.placed
}

// stubFeeds makes r's account feeds report cred's feed held here and
// healthy (or not).
func stubFeeds(r *Runtime, cred string, healthy bool) {
	if r.feeds == nil {
		r.feeds = &accountFeeds{r: r, cfg: AccountFeedConfig{}.withDefaults(), creds: map[string]*credFeed{},
			heard: map[string]time.Time{}, healthy: map[string]time.Time{}, told: map[string]time.Time{}}
	}
	m := r.feeds
	m.mu.Lock()
	defer m.mu.Unlock()
	if !healthy {
		delete(m.healthy, cred)
		return
	}
	m.healthy[cred] = time.Now().Add(time.Hour) // fresh for the whole test
	m.creds[cred] = &credFeed{id: cred, holding: true, ready: true}
}

// timedOutPlacement places limit order clientID on a venue that takes it
// but neither answers nor shows it: the request ends with its outcome
// unknown.
func timedOutPlacement(t *testing.T, d dispatch, clientID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if _, err := d.run(ctx, limitOp, limit(clientID, "0.01")); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Fatalf("placement: %v, want an unknown outcome", err)
	}
}

func settlingDispatch(t *testing.T) (*hiddenVenue, dispatch) {
	v := &hiddenVenue{venueFake: venueFake{orders: map[string]FoundOrder{}, hang: true}, hidden: true}
	d := newDispatch(&v.venueFake, NewMemoryIdempotency(nil))
	d.r.adapter, d.r.unsettled = v, newUnsettledSet()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.r.settleLoop(ctx, 20*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	return v, d
}

// repeatAnswers checks that a repeat of clientID is answered with the
// stored order, looks nothing up and places nothing.
func repeatAnswers(t *testing.T, v *hiddenVenue, d dispatch, clientID string) {
	t.Helper()
	finds, placed := v.counts()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := d.run(ctx, limitOp, limit(clientID, "0.01"))
	if err != nil || !strings.Contains(string(res.(json.RawMessage)), `"orderId":"id-`+clientID+`"`) {
		t.Fatalf("repeat of %s: %s %v", clientID, res, err)
	}
	if f, p := v.counts(); f != finds || p != placed || p != 1 {
		t.Fatalf("the repeat looked up %d and placed %d (placed %d in all), want the stored result", f-finds, p-placed, p)
	}
}

func settledRecord(t *testing.T, d dispatch, key string) {
	t.Helper()
	testenv.Poll(t, "the placement settled", 3*time.Second, func() error {
		if rec, ok := d.r.idem.(*MemoryIdempotency).Lookup(key); !ok || rec.Pending() {
			return errorf("record of %s still pending", key)
		}
		return nil
	})
}

// TestUnsettledSettledByEvent: while the credential's feed is healthy, a
// placement whose outcome was unknown is settled by its order event, with
// no look-up after the request's own; the repeat gets the stored result.
func TestUnsettledSettledByEvent(t *testing.T) {
	v, d := settlingDispatch(t)
	stubFeeds(d.r, "cred-1", true)
	timedOutPlacement(t, d, "ev1")
	finds, _ := v.counts()
	time.Sleep(300 * time.Millisecond) // 15 ticks
	if f, _ := v.counts(); f != finds {
		t.Fatalf("%d look-ups while the feed was healthy, want 0", f-finds)
	}
	price := decimal.RequireFromString("50000")
	d.r.unsettled.onEvent("cred-1", contract.OrderEvent{OrderID: "id-ev1", ClientOrderID: "ev1", Market: "BTC-USD-PERP",
		Side: contract.Buy, Type: "LIMIT", Size: decimal.RequireFromString("0.01"), Price: &price, Status: contract.StatusOpen})
	settledRecord(t, d, "cred-1:ev1")
	if f, _ := v.counts(); f != finds {
		t.Fatalf("%d look-ups to settle by event, want 0", f-finds)
	}
	repeatAnswers(t, v, d, "ev1")
}

// TestUnsettledEventBeforeGivingUp: the order event came while the
// placement was still waiting for the venue; it settles the placement
// once the request gave up.
func TestUnsettledEventBeforeGivingUp(t *testing.T) {
	v, d := settlingDispatch(t)
	stubFeeds(d.r, "cred-1", true)
	d.r.unsettled.onEvent("cred-1", contract.OrderEvent{OrderID: "id-ev2", ClientOrderID: "ev2", Market: "BTC-USD-PERP",
		Side: contract.Buy, Type: "LIMIT", Size: decimal.RequireFromString("0.01"), Status: contract.StatusOpen})
	timedOutPlacement(t, d, "ev2")
	settledRecord(t, d, "cred-1:ev2")
	repeatAnswers(t, v, d, "ev2")
}

// TestUnsettledPolledWhileFeedUnhealthy: without a healthy feed the
// placement is looked up every tick until the venue shows it, then
// settled; a healthy feed stops the look-ups.
func TestUnsettledPolledWhileFeedUnhealthy(t *testing.T) {
	v, d := settlingDispatch(t)
	stubFeeds(d.r, "cred-1", false)
	timedOutPlacement(t, d, "po1")
	finds, _ := v.counts()
	testenv.Poll(t, "look-ups while the feed is unhealthy", 2*time.Second, func() error {
		if f, _ := v.counts(); f < finds+3 {
			return errorf("%d look-ups", f-finds)
		}
		return nil
	})
	stubFeeds(d.r, "cred-1", true)
	time.Sleep(50 * time.Millisecond) // a look-up under way ends
	finds, _ = v.counts()
	time.Sleep(300 * time.Millisecond)
	if f, _ := v.counts(); f != finds {
		t.Fatalf("%d look-ups once the feed was healthy, want 0", f-finds)
	}
	stubFeeds(d.r, "cred-1", false)
	v.mu.Lock()
	v.hidden = false
	v.mu.Unlock()
	settledRecord(t, d, "cred-1:po1")
	repeatAnswers(t, v, d, "po1")
}
