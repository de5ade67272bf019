// Package eventstest starts an account event stream of a test's own on
// the test NATS server.
package eventstest

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

// Stream is a test's event stream: its publisher and a reader.
type Stream struct {
	NATS   *nats.Conn
	Config events.Config
	Pub    *events.Publisher
	Reader *events.Reader
}

// Start creates an event stream under a prefix unique to t, with the
// duplicate window dup (the default when zero), on the test NATS server
// (skipping t without it), and deletes it when t ends.
func Start(t testing.TB, dup time.Duration) *Stream {
	t.Helper()
	nc := testenv.NATS(t)
	cfg := events.Config{Subjects: contract.NewSubjects(testenv.Prefix(t)), Retention: time.Hour, Replicas: 1, Duplicates: dup}
	pub := events.NewPublisher(nc, cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pub.Close()
		js, _ := jetstream.New(nc)
		_ = js.DeleteStream(context.Background(), cfg.Subjects.AccountEventStream())
	})
	r, err := events.NewReader(nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Stream{NATS: nc, Config: cfg, Pub: pub, Reader: r}
}

// Flush waits until the publisher has stored everything queued.
func (s *Stream) Flush(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Pub.Flush(ctx); err != nil {
		t.Fatalf("flush events: %v", err)
	}
}
