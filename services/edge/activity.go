package edge

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
)

// usageFlushEvery is how often an edge reports its usage counts.
const usageFlushEvery = time.Second

// usageCounter gathers request counts per key, UTC day and operation
// between reports (DESIGN §12: every request that passed authentication).
type usageCounter struct {
	mu     sync.Mutex
	counts map[usageKey]*contract.UsageEntry
	// The UTC day of the latest count and its name: formatting the day
	// was one of the edge's allocations per request.
	day     int64
	dayName string
}

type usageKey struct{ key, day, op string }

func newUsageCounter() *usageCounter {
	return &usageCounter{counts: map[usageKey]*contract.UsageEntry{}}
}

func (u *usageCounter) add(at time.Time, keyID, op string, ok bool) {
	if op == "" {
		op = contract.UsageInvalidOperation
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if day := at.Unix() / 86400; day != u.day || u.dayName == "" {
		u.day, u.dayName = day, at.UTC().Format(time.DateOnly)
	}
	k := usageKey{keyID, u.dayName, op}
	e := u.counts[k]
	if e == nil {
		e = &contract.UsageEntry{KeyID: keyID, Day: k.day, Operation: op}
		u.counts[k] = e
	}
	if ok {
		e.OK++
	} else {
		e.Failed++
	}
}

// take returns the counts gathered so far and starts afresh.
func (u *usageCounter) take() []contract.UsageEntry {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]contract.UsageEntry, 0, len(u.counts))
	for _, e := range u.counts {
		out = append(out, *e)
	}
	clear(u.counts)
	return out
}

// putBack returns counts a failed report could not deliver.
func (u *usageCounter) putBack(entries []contract.UsageEntry) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, e := range entries {
		k := usageKey{e.KeyID, e.Day, e.Operation}
		if cur := u.counts[k]; cur != nil {
			cur.OK, cur.Failed = cur.OK+e.OK, cur.Failed+e.Failed
		} else {
			c := e
			u.counts[k] = &c
		}
	}
}

// countUsage records one authenticated request as the client saw it.
func (s *Server) countUsage(keyID, op string, ce *contract.Error) {
	s.usage.add(s.now(), keyID, op, ce == nil)
}

// reportUsage publishes the counts since the last report; while NATS is
// down they wait for the next one.
func (s *Server) reportUsage() {
	entries := s.usage.take()
	if len(entries) == 0 {
		return
	}
	data, _ := json.Marshal(contract.UsageReport{Entries: entries})
	if err := s.nc.Publish(s.subjects.Usage(), data); err != nil {
		s.usage.putBack(entries)
		s.log.Warn("usage report not sent; kept for the next", "err", err)
	}
}

// reportUsageEvery runs until stop is closed, then sends a last report.
func (s *Server) reportUsageEvery(every time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			s.reportUsage()
			_ = s.nc.FlushTimeout(time.Second)
			return
		case <-t.C:
			s.reportUsage()
		}
	}
}

// auditPublishTimeout bounds waiting for the stream's acknowledgement.
const auditPublishTimeout = 2 * time.Second

// auditor writes audit entries into the audit stream and waits for the
// stream to acknowledge each.
type auditor struct {
	js      jetstream.JetStream
	subject string
	// sink, when set, takes the entries instead (Deps.AuditSink).
	sink func(context.Context, contract.AuditEntry) error
}

func newAuditor(nc *nats.Conn, subjects contract.Subjects) (*auditor, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return &auditor{js: js, subject: subjects.Audit()}, nil
}

// record publishes e; the stream drops a repeat of the same entry (same
// request id and stage) within two minutes.
func (a *auditor) record(ctx context.Context, e contract.AuditEntry, timeout time.Duration) error {
	if a.sink != nil {
		return a.sink(context.WithoutCancel(ctx), e)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	stage := "final"
	if e.Code == contract.AuditPending {
		stage = "pending"
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	_, err = a.js.Publish(ctx, a.subject, data, jetstream.WithMsgID(e.RequestID+":"+stage))
	return err
}

// auditTrail is what executeAudited gives execute: the entry it fills in
// and the hook execute calls right before it routes the call.
type auditTrail struct {
	entry contract.AuditEntry
	sent  bool // the call went to a connector
}

// executeAudited runs execute for a trading call with its audit entries:
// a PENDING entry acknowledged by the audit stream before the call is
// routed (no entry, no call), and the outcome after. Read-only operations
// are not audited.
func (s *Server) executeAudited(ctx context.Context, via, rid string, key contract.KeyInfo, op *contract.Operation,
	fields map[string]json.RawMessage) (json.RawMessage, contract.Exchange, *contract.Error) {
	canonicalCredentialID(fields)
	if !op.ReadOnly {
		if ce := s.tradingRefused(ctx); ce != nil {
			return nil, "", ce
		}
	}
	if op.ReadOnly || s.audit == nil {
		return s.execute(ctx, rid, key, op, fields, nil)
	}
	start := s.now()
	raw := map[string]json.RawMessage{}
	for k, v := range fields {
		if k != "credentialId" {
			raw[k] = v
		}
	}
	params, _ := json.Marshal(raw)
	trail := &auditTrail{entry: contract.AuditEntry{
		Time: start.UTC(), RequestID: rid, AccountID: key.AccountID, KeyID: key.ID, KeyDisplay: key.Display,
		Operation: op.Name, Params: params, Via: via, OrderIDs: []string{},
	}}
	if raw, ok := fields["credentialId"]; ok {
		_ = json.Unmarshal(raw, &trail.entry.CredentialID)
	}
	beforeRoute := func(cred contract.CredentialInfo, params json.RawMessage) *contract.Error {
		trail.entry.CredentialID, trail.entry.Exchange, trail.entry.Params = cred.ID, cred.Exchange, params
		pending := trail.entry
		pending.Code = contract.AuditPending
		if err := s.audit.record(ctx, pending, auditPublishTimeout); err != nil {
			if s.audit.sink != nil {
				return s.unavailable(ctx, "audit log", err,
					"the gateway cannot write this trading call to its audit log (see the gateway's log for the disk error), so nothing was sent; retry shortly")
			}
			return s.unavailable(ctx, "audit stream", err,
				"the gateway cannot write this trading call to its audit trail (NATS JetStream is not answering), so nothing was sent; retry shortly")
		}
		trail.sent = true
		return nil
	}
	result, x, ce := s.execute(ctx, rid, key, op, fields, beforeRoute)
	e := trail.entry
	e.Code, e.DurationMs = codeOf(ce), float64(s.now().Sub(start).Microseconds())/1000
	if ce != nil {
		e.Message = ce.Message
	}
	e.OrderIDs = orderIDsOf(result)
	if s.audit.sink == nil && !s.nc.IsConnected() {
		// The client hears now; the outcome is written once the bus is back.
		go s.recordOutcome(ctx, e, trail.sent, auditLateTimeout)
	} else {
		s.recordOutcome(ctx, e, trail.sent, auditPublishTimeout)
	}
	return result, x, ce
}

// auditLateTimeout bounds writing an outcome while the bus is down.
const auditLateTimeout = time.Minute

func (s *Server) recordOutcome(ctx context.Context, e contract.AuditEntry, sent bool, timeout time.Duration) {
	if err := s.audit.record(ctx, e, timeout); err != nil {
		// The outcome stands; the PENDING entry (when the call was sent) says it happened.
		s.log.ErrorContext(ctx, "audit outcome not recorded", "request_id", e.RequestID, "operation", e.Operation, "code", e.Code, "sent", sent, "err", err)
	}
}

// orderIDsOf picks the order ids out of a trading result.
func orderIDsOf(result json.RawMessage) []string {
	var r struct {
		OrderID   string `json:"orderId"`
		TPOrderID string `json:"tpOrderId"`
		SLOrderID string `json:"slOrderId"`
		Results   []struct {
			OrderID string `json:"orderId"`
		} `json:"results"`
	}
	ids := []string{}
	if len(result) == 0 || json.Unmarshal(result, &r) != nil {
		return ids
	}
	for _, id := range []string{r.OrderID, r.TPOrderID, r.SLOrderID} {
		if id != "" {
			ids = append(ids, id)
		}
	}
	for _, o := range r.Results {
		if o.OrderID != "" {
			ids = append(ids, o.OrderID)
		}
	}
	return ids
}
