package keys

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Usage and audit (DESIGN §12): edges publish usage counts on core NATS
// (a lost report loses at most a second of counts) and audit entries into
// a JetStream stream (an edge answers a trading call only once its entry is
// in the stream); the keys service stores both.

// AuditConsumer is the durable consumer all keys replicas share (its name
// is in the keys user's NATS permissions, bus.ServiceUsers).
const AuditConsumer = contract.AuditConsumer

// auditRetention bounds how long an entry waits in the stream for a keys
// service to store it.
const auditRetention = 7 * 24 * time.Hour

// AuditStreamConfig is the stream edges publish audit entries into, with
// replicas copies on a JetStream cluster.
func AuditStreamConfig(subjects contract.Subjects, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        subjects.AuditStream(),
		Description: "perpgate audit entries on their way to the keys store",
		Subjects:    []string{subjects.Audit()},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      auditRetention,
		Duplicates:  2 * time.Minute,
		Replicas:    max(replicas, 1),
	}
}

// startActivity subscribes to usage reports and consumes the audit stream,
// creating it when missing. stop ends both.
func (s *Service) startActivity(ctx context.Context) (stop func(), err error) {
	sub, err := s.nc.QueueSubscribe(s.subjects.Usage(), "keys", s.onUsage)
	if err != nil {
		return nil, fmt.Errorf("subscribe to usage reports: %w", err)
	}
	js, err := jetstream.New(s.nc)
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("audit stream: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := js.CreateOrUpdateStream(sctx, AuditStreamConfig(s.subjects, s.cfg.JetStreamReplicas))
	if err != nil {
		_ = sub.Unsubscribe()
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, nats.ErrNoResponders) {
			return nil, fmt.Errorf("audit stream %s: JetStream is not enabled on the NATS server (start nats-server with -js): %w", s.subjects.AuditStream(), err)
		}
		return nil, fmt.Errorf("audit stream %s: %w", s.subjects.AuditStream(), err)
	}
	cons, err := stream.CreateOrUpdateConsumer(sctx, jetstream.ConsumerConfig{
		Durable: AuditConsumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
	})
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("audit consumer: %w", err)
	}
	workers := newAuditWorkers(s.onAudit)
	cc, err := cons.Consume(workers.handle)
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("consume audit stream: %w", err)
	}
	return func() { cc.Drain(); workers.wait(); _ = sub.Unsubscribe() }, nil
}

// auditConcurrency is how many audit entries are stored at once: the file
// store's appends then share fsyncs, and Postgres round trips overlap.
// Entries may land in any order; both stores keep a final entry over a
// pending one whichever comes first.
const auditConcurrency = 16

// auditWorkers runs a handler on up to auditConcurrency messages at once;
// handle blocks while all are busy, which holds back the consumer.
type auditWorkers struct {
	handler  func(jetstream.Msg)
	slots    chan struct{}
	inflight sync.WaitGroup
}

func newAuditWorkers(handler func(jetstream.Msg)) *auditWorkers {
	return &auditWorkers{handler: handler, slots: make(chan struct{}, auditConcurrency)}
}

func (w *auditWorkers) handle(m jetstream.Msg) {
	w.slots <- struct{}{}
	w.inflight.Add(1)
	go func() {
		defer func() { <-w.slots; w.inflight.Done() }()
		w.handler(m)
	}()
}

// wait returns when every entry handed over has been handled.
func (w *auditWorkers) wait() { w.inflight.Wait() }

func (s *Service) onUsage(m *nats.Msg) {
	var r contract.UsageReport
	if err := json.Unmarshal(m.Data, &r); err != nil {
		s.log.Warn("unreadable usage report", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), handlerTimeout)
	defer cancel()
	if err := s.RecordUsage(ctx, r.Entries); err != nil {
		s.log.Error("usage counts not stored", "entries", len(r.Entries), "err", err)
	}
}

// onAudit stores one audit entry and acknowledges it; a failed store is
// redelivered a second later, so no entry is lost while the store is down.
func (s *Service) onAudit(m jetstream.Msg) {
	var e contract.AuditEntry
	if err := json.Unmarshal(m.Data(), &e); err != nil {
		s.log.Error("unreadable audit entry dropped", "err", err)
		_ = m.Term()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), handlerTimeout)
	defer cancel()
	if err := s.store.PutAudit(ctx, e); err != nil {
		s.log.Warn("audit entry not stored yet; redelivering", "request_id", e.RequestID, "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	}
	_ = m.Ack()
}

// RecordUsage adds request counts to the store.
func (s *Service) RecordUsage(ctx context.Context, entries []contract.UsageEntry) error {
	if len(entries) == 0 {
		return nil
	}
	return s.store.AddUsage(ctx, entries)
}

// MaxUsageDays is the most days GET /admin/v1/keys/{id}/usage returns.
const MaxUsageDays = 92

// KeyUsage returns a key's usage of the last days UTC days, oldest first,
// today included, every day present. API_KEY_NOT_FOUND when there is no
// such key; INVALID_REQUEST when days is not 1 to MaxUsageDays.
func (s *Service) KeyUsage(ctx context.Context, keyID string, days int) ([]contract.UsageDay, error) {
	if days < 1 || days > MaxUsageDays {
		return nil, contract.Errorf(contract.CodeInvalidRequest, "days must be 1 to %d", MaxUsageDays)
	}
	id, ok := canonicalID(keyID)
	if !ok {
		return nil, keyNotFound(keyID)
	}
	if _, err := s.store.KeyByID(ctx, id); err != nil {
		return nil, s.storeError("key usage", id, err)
	}
	today := s.clock().Truncate(24 * time.Hour)
	from := today.AddDate(0, 0, 1-days)
	entries, err := s.store.Usage(ctx, id, from.Format(time.DateOnly))
	if err != nil {
		return nil, fmt.Errorf("key usage: %w", err)
	}
	out := make([]contract.UsageDay, days)
	index := map[string]int{}
	for i := range out {
		d := from.AddDate(0, 0, i).Format(time.DateOnly)
		out[i], index[d] = contract.UsageDay{Date: d, ByOperation: map[string]contract.OperationCounts{}}, i
	}
	for _, e := range entries {
		if i, ok := index[e.Day]; ok {
			c := out[i].ByOperation[e.Operation]
			c.OK, c.Failed = c.OK+e.OK, c.Failed+e.Failed
			out[i].ByOperation[e.Operation] = c
		}
	}
	return out, nil
}

// MaxAuditPage is the most entries one audit page holds.
const MaxAuditPage = 1000

// AuditLog returns an account's audit entries with since <= time < until
// (zero: unbounded), oldest first, limit per page (1 to MaxAuditPage),
// continuing after cursor (from the previous page's nextCursor).
func (s *Service) AuditLog(ctx context.Context, accountID string, since, until time.Time, limit int, cursor string, newest bool) (contract.AuditPage, error) {
	id, ok := canonicalID(accountID)
	if !ok {
		return contract.AuditPage{}, accountNotFound(accountID)
	}
	if limit < 1 || limit > MaxAuditPage {
		return contract.AuditPage{}, contract.Errorf(contract.CodeInvalidRequest, "limit must be 1 to %d", MaxAuditPage)
	}
	if until.IsZero() {
		until = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if !since.Before(until) {
		return contract.AuditPage{}, contract.Errorf(contract.CodeInvalidRequest, "since must be before until")
	}
	q := AuditQuery{AccountID: id, Since: since, Until: until, Limit: limit + 1, Newest: newest}
	if newest { // before every entry of the window, until a cursor says otherwise
		q.AfterTime = until
	}
	if cursor != "" {
		t, rid, err := decodeCursor(cursor)
		if err != nil {
			return contract.AuditPage{}, contract.Errorf(contract.CodeInvalidRequest, "cursor is not one this API returned: pass nextCursor of the previous page as it is")
		}
		q.AfterTime, q.AfterID = t, rid
	}
	if _, err := s.store.Account(ctx, id); err != nil {
		return contract.AuditPage{}, s.storeError("audit log", id, err)
	}
	entries, err := s.store.Audit(ctx, q)
	if err != nil {
		return contract.AuditPage{}, fmt.Errorf("audit log: %w", err)
	}
	page := contract.AuditPage{Entries: entries}
	if len(entries) > limit {
		page.Entries = entries[:limit]
		last := page.Entries[limit-1]
		c := encodeCursor(last.Time, last.RequestID)
		page.NextCursor = &c
	}
	for i := range page.Entries {
		if page.Entries[i].OrderIDs == nil {
			page.Entries[i].OrderIDs = []string{}
		}
	}
	return page, nil
}

func encodeCursor(t time.Time, requestID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(t.UTC().Format(time.RFC3339Nano) + "|" + requestID))
}

func decodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", err
	}
	ts, rid, ok := strings.Cut(string(b), "|")
	if !ok {
		return time.Time{}, "", errors.New("no separator")
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	return t, rid, err
}
