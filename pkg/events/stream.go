// Package events carries account events (DESIGN §13) through a JetStream
// stream: the venue side publishes them in order (Publisher), the edge
// reads them from any point within the retention (Follow, Read). An
// event's id is its sequence in the stream, so a client resumes exactly
// after the last event it saw.
package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Environment variables.
const (
	RetentionVar = "PERPGATE_EVENTS_RETENTION"
	ReplicasVar  = "PERPGATE_JETSTREAM_REPLICAS"
)

// DefaultRetention is how long events stay resumable by default.
const DefaultRetention = 24 * time.Hour

// duplicateWindow is how long JetStream remembers message ids, so an event
// published twice (a retry, a reconcile on another replica) is stored once.
const duplicateWindow = 2 * time.Minute

// Config is where events are kept and for how long.
type Config struct {
	Subjects  contract.Subjects
	Retention time.Duration // events older than this are dropped
	Replicas  int           // JetStream replicas of the stream
	// Duplicates is how long a repeated event id is dropped; 2 minutes
	// when zero (tests shorten it to see what deduplication would hide).
	Duplicates time.Duration
}

// LoadConfig reads PERPGATE_EVENTS_RETENTION (Go duration, default 24h)
// and PERPGATE_JETSTREAM_REPLICAS (1 to 5, default 1).
func LoadConfig(lookup func(string) (string, bool), subjects contract.Subjects) (Config, error) {
	c := Config{Subjects: subjects, Retention: DefaultRetention, Replicas: 1}
	var errs []error
	if v, ok := lookup(RetentionVar); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			errs = append(errs, fmt.Errorf("%s: %q must be a Go duration of at least 1m, e.g. 24h", RetentionVar, v))
		}
		c.Retention = d
	}
	if v, ok := lookup(ReplicasVar); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 5 {
			errs = append(errs, fmt.Errorf("%s: %q must be an integer from 1 to 5 (3 for a three-server cluster)", ReplicasVar, v))
		}
		c.Replicas = n
	}
	return c, errors.Join(errs...)
}

// StreamConfig is the JetStream stream of account events.
func StreamConfig(c Config) jetstream.StreamConfig {
	dup := duplicateWindow
	if c.Duplicates > 0 {
		dup = c.Duplicates
	}
	if c.Retention < dup {
		dup = c.Retention
	}
	return jetstream.StreamConfig{
		Name:        c.Subjects.AccountEventStream(),
		Description: "perpgate account events: orders, fills, positions, balances, funding",
		Subjects:    []string{c.Subjects.AccountEventsRoot()},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      c.Retention,
		Replicas:    max(c.Replicas, 1),
		Duplicates:  dup,
	}
}

// Ensure creates the stream, or updates it to c (retention changes take
// effect on restart).
func Ensure(ctx context.Context, js jetstream.JetStream, c Config) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := js.CreateOrUpdateStream(ctx, StreamConfig(c))
	if err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, nats.ErrNoResponders) {
			return nil, fmt.Errorf("account event stream %s: JetStream is not enabled on the NATS server (start nats-server with -js): %w", c.Subjects.AccountEventStream(), err)
		}
		return nil, fmt.Errorf("account event stream %s: %w", c.Subjects.AccountEventStream(), err)
	}
	return s, nil
}
