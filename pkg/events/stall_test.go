package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestFollowReopensAConsumerThatStopsDelivering: a consumer that stays
// alive (its heartbeats keep coming) but delivers nothing, as one on a
// server whose copy of the stream lags after a leader change does, is
// replaced once the stream holds an event the cursor has not had. The
// stall is made by pausing the cursor's consumer on the server.
func TestFollowReopensAConsumerThatStopsDelivering(t *testing.T) {
	srv := testenv.EmbeddedNATS(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cfg := events.Config{Subjects: contract.NewSubjects("stall"), Retention: time.Hour, Replicas: 1}
	pub := events.NewPublisher(nc, cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	r, err := events.NewReader(nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Follow(ctx, contract.Paper, cred, nil, events.Where{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	js, _ := jetstream.New(nc)
	st, err := js.Stream(ctx, cfg.Subjects.AccountEventStream())
	if err != nil {
		t.Fatal(err)
	}
	names := st.ConsumerNames(ctx)
	paused := 0
	for name := range names.Name() {
		if _, err := js.PauseConsumer(ctx, cfg.Subjects.AccountEventStream(), name, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		paused++
	}
	if paused != 1 {
		t.Fatalf("paused %d consumers, want the cursor's one", paused)
	}
	pub.Publish(order("1", "OPEN", "0"))
	flush(t, pub)
	start := time.Now()
	wait, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	ev, err := c.Next(wait)
	if err != nil {
		t.Fatalf("no event %s after the consumer stalled: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if ev.Type != contract.EventOrder {
		t.Fatalf("event %s, want the order", ev.Type)
	}
	t.Logf("delivered %s after the stall began", time.Since(start).Round(time.Millisecond))
}
