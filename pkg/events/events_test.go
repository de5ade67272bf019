package events_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/pkg/events/eventstest"
	"github.com/shopspring/decimal"
)

const cred = "0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11"

func setup(t *testing.T) (*events.Publisher, *events.Reader) {
	t.Helper()
	s := eventstest.Start(t, 0)
	return s.Pub, s.Reader
}

func order(id, status, filled string) events.Outgoing {
	return events.New(contract.Paper, cred, contract.SourceStream, time.Now(), contract.OrderEvent{
		OrderID: id, Market: "BTC-USD-PERP", Side: contract.Buy, Type: "LIMIT", Size: decimal.RequireFromString("1"),
		FilledSize: decimal.RequireFromString(filled), Status: status})
}

func flush(t *testing.T, pub *events.Publisher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := pub.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

func next(t *testing.T, c *events.Cursor) contract.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := c.Next(ctx)
	if err != nil {
		t.Fatalf("next event: %v", err)
	}
	return ev
}

func TestFollowDeliversInOrderAndResumesExactlyAfterAnID(t *testing.T) {
	pub, r := setup(t)
	ctx := context.Background()
	c, err := r.Follow(ctx, contract.Paper, cred, nil, events.Where{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pub.Publish(order("1", "OPEN", "0"))
	pub.Publish(events.New(contract.Paper, cred, contract.SourceStream, time.Now(), contract.FillEvent{FillID: "f1", OrderID: "1",
		Market: "BTC-USD-PERP", Side: contract.Buy, Size: decimal.RequireFromString("1"), Price: decimal.RequireFromString("100"),
		Fee: decimal.RequireFromString("0.05"), FeeAsset: "USD", Liquidity: "MAKER"}))
	pub.Publish(order("1", "FILLED", "1"))
	first, fill, filled := next(t, c), next(t, c), next(t, c)
	if first.Type != contract.EventOrder || fill.Type != contract.EventFill || filled.Type != contract.EventOrder {
		t.Fatalf("types = %s %s %s, want order fill order", first.Type, fill.Type, filled.Type)
	}
	if first.CredentialID != cred || first.Exchange != contract.Paper || first.Source != "stream" || first.Time == 0 || first.ReceivedAt == 0 {
		t.Errorf("envelope = %+v", first)
	}

	// Three more events; a client that saw `first` gets exactly the four after it.
	pub.Publish(order("2", "OPEN", "0"))
	pub.Publish(order("2", "CANCELLED", "0"))
	pub.Publish(order("3", "OPEN", "0"))
	flush(t, pub)
	seq, _, _ := events.ParseID(first.ID)
	resumed, err := r.Follow(ctx, contract.Paper, cred, nil, events.Where{After: seq, HasAfter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	if resumed.Reset {
		t.Fatal("a resume within the retention was told to reset")
	}
	var got []string
	for range 5 {
		got = append(got, next(t, resumed).ID)
	}
	for i := 1; i < len(got); i++ {
		a, _ := strconv.Atoi(got[i-1])
		b, _ := strconv.Atoi(got[i])
		if b != a+1 {
			t.Fatalf("resumed ids %v are not consecutive", got)
		}
	}
	if got[0] != fill.ID || got[1] != filled.ID {
		t.Fatalf("resume after %s gave %v, want %s and %s first", first.ID, got, fill.ID, filled.ID)
	}
	ctx2, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if ev, err := resumed.Next(ctx2); err == nil {
		t.Fatalf("a sixth event %s after the five published", ev.ID)
	}
}

func TestDuplicateOrderStatesAndFillsAreStoredOnce(t *testing.T) {
	pub, r := setup(t)
	pub.Publish(order("9", "OPEN", "0"))
	pub.Publish(order("9", "OPEN", "0")) // a reconcile seeing the same state
	pub.Publish(order("9", "OPEN", "0.5"))
	flush(t, pub)
	page, err := r.Read(context.Background(), contract.Paper, cred, nil, events.Where{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 2 {
		t.Fatalf("stored %d events, want 2 (the repeated state once)", len(page.Events))
	}
}

func TestReadPagesFilterTypesAndResetOnAnUnknownID(t *testing.T) {
	pub, r := setup(t)
	for i := range 5 {
		pub.Publish(order(strconv.Itoa(i), "OPEN", "0"))
		pub.Publish(events.New(contract.Paper, cred, contract.SourceStream, time.Now(), contract.BalanceEvent{Asset: "USD"}))
	}
	// Another credential's events never show.
	pub.Publish(events.New(contract.Paper, "11111111-1111-1111-1111-111111111111", contract.SourceStream, time.Now(), contract.BalanceEvent{Asset: "USD"}))
	flush(t, pub)
	ctx := context.Background()
	page, err := r.Read(ctx, contract.Paper, cred, []contract.EventType{contract.EventOrder}, events.Where{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 3 || page.Events[2].ID != page.Next {
		t.Fatalf("first page = %d events, next %s", len(page.Events), page.Next)
	}
	after, _, _ := events.ParseID(page.Next)
	rest, err := r.Read(ctx, contract.Paper, cred, []contract.EventType{contract.EventOrder}, events.Where{After: after, HasAfter: true}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.Events) != 2 || rest.Reset {
		t.Fatalf("second page = %d events (reset %v), want the other 2", len(rest.Events), rest.Reset)
	}
	all, err := r.Read(ctx, contract.Paper, cred, nil, events.Where{}, 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Events) != 10 {
		t.Fatalf("all types: %d events, want 10 of this credential", len(all.Events))
	}
	future, err := r.Read(ctx, contract.Paper, cred, nil, events.Where{After: 1 << 40, HasAfter: true}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !future.Reset || len(future.Events) != 0 {
		t.Fatalf("an id past the stream: reset %v, %d events; want a reset and none", future.Reset, len(future.Events))
	}
}

func TestLoadConfigDefaultsAndRefusals(t *testing.T) {
	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := events.LoadConfig(lookup, contract.NewSubjects(""))
	if err != nil || c.Retention != 24*time.Hour || c.Replicas != 1 {
		t.Fatalf("defaults = %+v, %v", c, err)
	}
	env[events.RetentionVar], env[events.ReplicasVar] = "1h", "3"
	if c, err = events.LoadConfig(lookup, contract.NewSubjects("")); err != nil || c.Retention != time.Hour || c.Replicas != 3 {
		t.Fatalf("set = %+v, %v", c, err)
	}
	if events.StreamConfig(c).Replicas != 3 || events.StreamConfig(c).MaxAge != time.Hour {
		t.Fatal("stream config does not carry replicas and retention")
	}
	env[events.RetentionVar], env[events.ReplicasVar] = "soon", "7"
	if _, err = events.LoadConfig(lookup, contract.NewSubjects("")); err == nil {
		t.Fatal("bad values accepted")
	}
}
