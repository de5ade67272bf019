package venue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/pkg/events/eventstest"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
	"github.com/shopspring/decimal"
)

// TestReconcilePublishesWhatTheStreamLacksOnce: the venue stops with
// events unpublished (here: its sink detached, as a crash loses the
// queue), things happen meanwhile, and at the next start the reconcile
// publishes exactly what the stream lacks, with source reconcile, and
// nothing it has. The stream's duplicate window is shortened, so it does
// not hide a repeat.
func TestReconcilePublishesWhatTheStreamLacksOnce(t *testing.T) {
	stream := eventstest.Start(t, time.Second)
	pub, reader := stream.Pub, stream.Reader
	ctx := context.Background()
	flush := func() { t.Helper(); stream.Flush(t) }
	clock := testenv.NewClock(time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC))
	e := paper.New(paper.Config{Seed: 7, Now: clock.Now})
	const cred = "6f1c2b8e-2f5e-4a8e-9a4b-3c2d1e0f9a8b"
	log := slog.New(slog.DiscardHandler)
	place := func(req paper.OrderRequest) paper.Order {
		t.Helper()
		clock.Advance(time.Second)
		o, err := e.PlaceOrder(cred, req)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	btc := "BTC-USD-PERP"
	size := decimal.RequireFromString("0.01")

	stop := venue.PublishEvents(e, pub, reader.Last, log)
	buy := place(paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: size})
	resting := place(paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: size, Price: decimal.NewFromInt(1000)})
	flush()
	stop()                              // the venue goes; what follows is published by nobody
	time.Sleep(1200 * time.Millisecond) // past the duplicate window
	sell := place(paper.OrderRequest{Market: btc, Side: paper.Sell, Type: paper.Market, Size: size})
	clock.Advance(time.Second)
	if _, err := e.CancelOrder(cred, resting.ID); err != nil {
		t.Fatal(err)
	}
	later := place(paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: size, Price: decimal.NewFromInt(1001)})

	stop = venue.PublishEvents(e, pub, reader.Last, log) // the venue is back
	defer stop()
	flush()
	page, err := reader.Read(ctx, contract.Paper, cred, nil, events.Where{}, 500)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	sources := map[string]string{}
	for _, ev := range page.Events {
		var d map[string]any
		_ = json.Unmarshal(ev.Data, &d)
		k := string(ev.Type)
		switch ev.Type {
		case contract.EventOrder:
			k += fmt.Sprintf(" %v %v %v", d["orderId"], d["status"], d["filledSize"])
		case contract.EventFill:
			k += fmt.Sprintf(" of %v", d["orderId"])
		case contract.EventPosition:
			k += fmt.Sprintf(" %v", d["side"])
		default:
			continue
		}
		seen[k]++
		sources[k] = ev.Source
	}
	want := map[string]string{
		"order " + buy.ID + " FILLED 0.01":     "stream",
		"fill of " + buy.ID:                    "stream",
		"order " + resting.ID + " OPEN 0":      "stream",
		"fill of " + sell.ID:                   "reconcile",
		"order " + sell.ID + " FILLED 0.01":    "reconcile",
		"order " + resting.ID + " CANCELLED 0": "reconcile",
		"order " + later.ID + " OPEN 0":        "reconcile",
		"position FLAT":                        "reconcile",
	}
	for k, src := range want {
		if seen[k] != 1 || sources[k] != src {
			t.Errorf("%s: seen %d times, source %q; want once from %s", k, seen[k], sources[k], src)
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("%s published %d times", k, n)
		}
	}
}
