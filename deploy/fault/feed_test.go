package fault

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// Account feeds (issue 29): connector-paper follows the paper venue's
// private stream of each credential, one replica at a time under a lease.

// feedHolder reports when p logged that it holds cred's account feed.
func feedHolder(p *testenv.Process, cred string) (time.Time, bool) {
	for _, rec := range p.Records() {
		if rec["msg"] == "holding account feed" && rec["credential_id"] == cred {
			at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(rec["time"]))
			return at, true
		}
	}
	return time.Time{}, false
}

// nextFill reads events until a fill of order id and returns it; it fails
// the test on a second fill of an order already seen.
func (e *events) nextFill(id string, seen map[string]int, wait time.Duration) contract.Event {
	e.t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case ev := <-e.ch:
			var f contract.FillEvent
			_ = json.Unmarshal(ev.Data, &f)
			if seen[f.OrderID]++; seen[f.OrderID] > 1 {
				e.t.Fatalf("order %s: a second fill event (%s)", f.OrderID, ev.Source)
			}
			if f.OrderID == id {
				return ev
			}
		case <-deadline:
			e.t.Fatalf("no fill of order %s within %s", id, wait)
		}
	}
}

// TestAccountFeedMovesOnKill: two connector-paper replicas; the one
// holding the credential's feed is killed -9 while a client streams; the
// other holds it within 5 s, and the fill that happened in the gap (no
// one listening to the venue) arrives once, from its reconcile.
func TestAccountFeedMovesOnKill(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	cred := c.richCredential()
	second := testenv.Start(t, "connector-paper-2", filepath.Join(c.bins, "connector-paper"), c.env(map[string]string{
		"PERPGATE_PAPER_VENUE_URL": c.venueURL(), "PERPGATE_REDIS_URL": c.Redis.URL,
	}))
	second.Field(t, "connector started", "subject")
	s := c.events(c.APIKey, "types=fill&credentialId="+cred, nil)
	place := func(clientID string) string {
		t.Helper()
		var r reply
		testenv.Poll(t, "placement "+clientID, 10*time.Second, func() error {
			r = c.Call(c.APIKey, map[string]any{"operation": "placeMarketOrder", "credentialId": cred, "market": "BTC",
				"side": "BUY", "size": "0.001", "clientOrderId": clientID})
			if r.Status != 200 {
				return fmt.Errorf("%d %s", r.Status, r.Raw)
			}
			return nil
		})
		return r.Body["orderId"].(string)
	}
	seen := map[string]int{}
	if ev := s.nextFill(place("feed-before"), seen, 10*time.Second); ev.Source != contract.SourceStream {
		t.Errorf("fill while the feed is held: source %q, want stream", ev.Source)
	}
	holder, other := c.Connector, second
	if _, ok := feedHolder(second, cred); ok {
		holder, other = second, c.Connector
	} else if _, ok := feedHolder(c.Connector, cred); !ok {
		t.Fatal("neither replica logged that it holds the feed")
	}
	if _, ok := feedHolder(other, cred); ok {
		t.Fatal("both replicas hold the feed")
	}
	holder.Kill()
	killed := time.Now()
	gap := place("feed-gap")
	var took time.Duration
	testenv.Poll(t, "the other replica holds the feed", 10*time.Second, func() error {
		at, ok := feedHolder(other, cred)
		if !ok {
			return fmt.Errorf("not yet")
		}
		took = at.Sub(killed)
		return nil
	})
	t.Logf("the surviving replica held the feed %s after the kill", took)
	if took > 5*time.Second {
		t.Errorf("the feed moved %s after the kill, want within 5 s", took)
	}
	if ev := s.nextFill(gap, seen, 10*time.Second); ev.Source != contract.SourceReconcile {
		t.Errorf("fill in the gap: source %q, want reconcile", ev.Source)
	}
	after := place("feed-after")
	s.nextFill(after, seen, 10*time.Second)
	s.none(time.Second)
}

// TestProtectionPairOnFeedEvents: with the paper venue not linking the
// pair (so the gateway's watcher does, as on Binance), the take-profit
// fires and the stop-loss is cancelled within 1 s of the fill event, and
// the watcher polls nothing while the feed is healthy.
func TestProtectionPairOnFeedEvents(t *testing.T) {
	c := newCluster(t, clusterOptions{Env: map[string]string{"PERPGATE_PAPER_LINKED_PROTECTION": "off", "PERPGATE_LOG_LEVEL": "debug"}})
	cred := c.richCredential()
	call := c.mustCall(cred)
	mark := decimal.NewFromInt(50000)
	c.setMark("BTC-USD-PERP", mark)
	s := c.events(c.APIKey, "types=order,fill&credentialId="+cred, nil)
	call(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"})
	prot := call(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.01",
		"entryPrice": mark.String(), "tpPercent": 5, "slPercent": 30}).Body
	tp, sl := prot["tpOrderId"].(string), prot["slOrderId"].(string)
	time.Sleep(5 * time.Second) // two rounds of the watcher's 2 s checks
	c.setMark("BTC-USD-PERP", mark.Mul(decimal.RequireFromString("1.07")))
	var filled, cancelled time.Time
	for deadline := time.After(15 * time.Second); cancelled.IsZero(); {
		select {
		case ev := <-s.ch:
			var o contract.OrderEvent
			_ = json.Unmarshal(ev.Data, &o)
			switch {
			case ev.Type == contract.EventFill && o.OrderID == tp && filled.IsZero():
				filled = time.Now()
			case ev.Type == contract.EventOrder && o.OrderID == sl && o.Status == contract.StatusCancelled:
				cancelled = time.Now()
			}
		case <-deadline:
			t.Fatalf("take-profit %s filled at %v; stop-loss %s not cancelled within 15 s", tp, filled, sl)
		}
	}
	if filled.IsZero() {
		t.Fatalf("the stop-loss was cancelled before any fill of the take-profit")
	}
	if d := cancelled.Sub(filled); d > time.Second {
		t.Errorf("stop-loss cancelled %s after the take-profit's fill event, want within 1 s", d)
	}
	// The connector logs the cancel once the venue answered it, which may
	// be after the client read the venue's event.
	var polls, byEvent int
	testenv.Poll(t, "the event watcher logged the cancel", 2*time.Second, func() error {
		polls, byEvent = 0, 0
		for _, rec := range c.Connector.Records() {
			switch {
			case rec["msg"] == "protection pair polled":
				polls++
			case rec["msg"] == "protection leg cancelled" && rec["order_id"] == sl && rec["by"] == "event":
				byEvent++
			}
		}
		if byEvent == 0 {
			return fmt.Errorf("no \"protection leg cancelled\" by event for %s", sl)
		}
		return nil
	})
	if polls != 0 {
		t.Errorf("the watcher polled %d times while the feed was healthy, want 0", polls)
	}
	if byEvent != 1 {
		t.Errorf("stop-loss cancelled by the event watcher %d times, want 1", byEvent)
	}
}

// TestAttachedPairOnFeedEvents: a resting entry with takeProfit and
// stopLoss gets its pair from the fill event, and the attached loop polls
// no entry while the feed is healthy.
func TestAttachedPairOnFeedEvents(t *testing.T) {
	c := newCluster(t, clusterOptions{Env: map[string]string{"PERPGATE_LOG_LEVEL": "debug"}})
	cred := c.richCredential()
	call := c.mustCall(cred)
	mark := decimal.NewFromInt(50000)
	c.setMark("BTC-USD-PERP", mark)
	s := c.events(c.APIKey, "types=order&credentialId="+cred, nil)
	entry := call(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "49000",
		"clientOrderId": "att-entry-1", "takeProfit": map[string]any{"triggerPrice": "55000"},
		"stopLoss": map[string]any{"triggerPrice": "45000"}}).Body
	id, _ := entry["orderId"].(string)
	time.Sleep(5 * time.Second) // two rounds of the loop's 2 s ticks
	c.setMark("BTC-USD-PERP", decimal.NewFromInt(48900))
	var filled, legs time.Time
	for deadline := time.After(15 * time.Second); legs.IsZero(); {
		select {
		case ev := <-s.ch:
			var o contract.OrderEvent
			_ = json.Unmarshal(ev.Data, &o)
			switch {
			case o.OrderID == id && o.Status == contract.StatusFilled && filled.IsZero():
				filled = time.Now()
			case strings.HasSuffix(o.ClientOrderID, "-tp") && o.OrderID != id:
				legs = time.Now()
			}
		case <-deadline:
			t.Fatalf("entry %s filled at %v; no take-profit leg within 15 s", id, filled)
		}
	}
	if filled.IsZero() {
		t.Fatal("a take-profit leg before the entry filled")
	}
	if d := legs.Sub(filled); d > time.Second {
		t.Errorf("take-profit leg %s after the entry's fill event, want within 1 s", d)
	}
	polls := 0
	for _, rec := range c.Connector.Records() {
		if rec["msg"] == "attached entry polled" {
			polls++
		}
	}
	if polls != 0 {
		t.Errorf("the attached loop polled %d times while the feed was healthy, want 0", polls)
	}
}
