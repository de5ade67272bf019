package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
)

// maxQueued bounds the events waiting for JetStream; past it the oldest
// are dropped (and logged): reconciliation restores state, not memory.
const maxQueued = 100_000

// Outgoing is an event on its way to the stream, with the id JetStream
// deduplicates it by ("" for none).
type Outgoing struct {
	Event   contract.Event
	DedupID string
}

// New builds an outgoing event of credential cred on exchange x; data is
// one of the contract's event data structs. Fills deduplicate by fill id,
// order states by (id, status, filledSize), so a state published by the
// stream and again by a reconcile is stored once.
func New(x contract.Exchange, cred string, source string, venueTime time.Time, data any) Outgoing {
	ev := contract.Event{CredentialID: cred, Exchange: x, Source: source,
		Time: venueTime.UnixMilli(), ReceivedAt: time.Now().UnixMilli()}
	var dedup string
	switch d := data.(type) {
	case contract.OrderEvent:
		ev.Type = contract.EventOrder
		dedup = "order:" + cred + ":" + d.OrderID + ":" + d.Status + ":" + d.FilledSize.String()
	case contract.FillEvent:
		ev.Type = contract.EventFill
		dedup = "fill:" + cred + ":" + d.FillID
	case contract.PositionEvent:
		ev.Type = contract.EventPosition
	case contract.BalanceEvent:
		ev.Type = contract.EventBalance
	case contract.FundingEvent:
		ev.Type = contract.EventFunding
	case contract.ErrorEvent:
		ev.Type = contract.EventError
	}
	ev.Data, _ = json.Marshal(data) // the event structs always encode
	return Outgoing{Event: ev, DedupID: dedup}
}

// Publisher writes events into the stream in the order they were handed
// to it, retrying while NATS is away. Publish never blocks the caller (the
// paper engine calls it under its lock).
type Publisher struct {
	cfg Config
	nc  *nats.Conn
	log *slog.Logger

	mu      sync.Mutex
	queue   []Outgoing
	wake    chan struct{}
	idle    chan struct{} // closed when the queue is empty; replaced when it fills
	stop    chan struct{}
	done    chan struct{}
	started bool
}

// NewPublisher returns a publisher on nc; Start creates the stream and
// starts it.
func NewPublisher(nc *nats.Conn, cfg Config, log *slog.Logger) *Publisher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	idle := make(chan struct{})
	close(idle)
	return &Publisher{cfg: cfg, nc: nc, log: log, wake: make(chan struct{}, 1), idle: idle,
		stop: make(chan struct{}), done: make(chan struct{})}
}

// Start ensures the stream exists and publishes queued events from then
// on. A NATS without JetStream fails here; a stream that cannot be made
// yet (a cluster still electing its leaders) is retried in the background
// while events queue.
func (p *Publisher) Start(ctx context.Context) error {
	js, err := jetstream.New(p.nc)
	if err != nil {
		return fmt.Errorf("account events: %w", err)
	}
	_, err = Ensure(ctx, js, p.cfg)
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
		return err
	}
	p.mu.Lock()
	p.started = true
	p.mu.Unlock()
	go func() {
		if err != nil && !p.ensure(js, err) {
			close(p.done)
			return
		}
		p.run(js)
	}()
	return nil
}

// ensure retries creating the stream until it exists; false once stopped.
func (p *Publisher) ensure(js jetstream.JetStream, err error) bool {
	backoff := 250 * time.Millisecond
	for err != nil {
		p.log.Warn("account event stream not ready yet; retrying", "err", err)
		select {
		case <-p.stop:
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
		_, err = Ensure(context.Background(), js, p.cfg)
	}
	return true
}

// Publish queues ev.
func (p *Publisher) Publish(ev Outgoing) {
	p.mu.Lock()
	if len(p.queue) >= maxQueued {
		p.log.Warn("account event queue full; dropping the oldest event", "credential", p.queue[0].Event.CredentialID)
		p.queue = p.queue[1:]
	}
	if len(p.queue) == 0 {
		p.idle = make(chan struct{})
	}
	p.queue = append(p.queue, ev)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Flush waits until every event queued so far is in the stream.
func (p *Publisher) Flush(ctx context.Context) error {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close publishes what is queued (for up to two seconds) and stops.
func (p *Publisher) Close() {
	p.mu.Lock()
	started := p.started
	p.mu.Unlock()
	if !started {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = p.Flush(ctx)
	cancel()
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

func (p *Publisher) run(js jetstream.JetStream) {
	defer close(p.done)
	p.log.Info("publishing account events", "stream", p.cfg.Subjects.AccountEventStream())
	for {
		p.mu.Lock()
		var next *Outgoing
		if len(p.queue) > 0 {
			next = &p.queue[0]
		}
		p.mu.Unlock()
		if next == nil {
			select {
			case <-p.stop:
				return
			case <-p.wake:
			}
			continue
		}
		if !p.send(js, *next) {
			return
		}
		p.mu.Lock()
		p.queue = p.queue[1:]
		if len(p.queue) == 0 {
			p.queue = nil
			close(p.idle)
		}
		p.mu.Unlock()
	}
}

// send publishes one event until the stream takes it; false once stopped.
func (p *Publisher) send(js jetstream.JetStream, out Outgoing) bool {
	ev := out.Event
	subject := p.cfg.Subjects.AccountEvents(ev.Exchange, ev.CredentialID, ev.Type)
	data, _ := json.Marshal(ev)
	var opts []jetstream.PublishOpt
	if out.DedupID != "" {
		opts = append(opts, jetstream.WithMsgID(out.DedupID))
	}
	backoff := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := js.Publish(ctx, subject, data, opts...)
		cancel()
		if err == nil {
			return true
		}
		p.log.Warn("account event not stored yet; retrying", "type", ev.Type, "err", err)
		select {
		case <-p.stop:
			return false
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}
