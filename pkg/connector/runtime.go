package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
)

// Config tunes a Runtime. Zero values take the defaults of DefaultConfig.
type Config struct {
	Subjects       contract.Subjects
	Version        string
	MaxConcurrent  int           // requests handled at once per replica
	DefaultTimeout time.Duration // when a request carries no deadline
	SecretTTL      time.Duration
	MarketTTL      time.Duration
	Now            func() time.Time
	Metrics        *telemetry.Metrics // optional
	// Protections holds the protection pairs the runtime watches on venues
	// that do not link them (ProtectionLinker); shared by replicas when in
	// Redis. Nil keeps them in memory.
	Protections ProtectionStore
	// Ledger sums each key's daily notional (maxDailyNotional); shared
	// (Redis) when several connectors serve one key. Default in memory.
	Ledger NotionalLedger
	// Attached holds entries placed with takeProfit/stopLoss until their
	// pair covers what filled; nil keeps them in memory.
	Attached AttachStore
	// ProtectionCheck is how often watched pairs are checked; default 2 s.
	ProtectionCheck time.Duration
	// Stream tunes the market-data view of adapters that are Streamers.
	Stream StreamConfig
	// Guards tunes how key guards value orders; nil is DefaultGuardConfig.
	Guards *GuardConfig
	// AccountFeeds tunes the private feeds of adapters that are
	// AccountFeeders (the lease comes from Stream).
	AccountFeeds AccountFeedConfig
}

// DefaultConfig returns the runtime defaults.
func DefaultConfig() Config {
	g := DefaultGuardConfig()
	return Config{
		Guards:         &g,
		Subjects:       contract.NewSubjects(""),
		Version:        "0.1.0",
		MaxConcurrent:  512,
		DefaultTimeout: 10 * time.Second,
		SecretTTL:      30 * time.Second,
		MarketTTL:      5 * time.Minute,
		Now:            time.Now,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Subjects.Prefix == "" {
		c.Subjects = d.Subjects
	}
	if c.Version == "" {
		c.Version = d.Version
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = d.MaxConcurrent
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = d.DefaultTimeout
	}
	if c.SecretTTL <= 0 {
		c.SecretTTL = d.SecretTTL
	}
	if c.MarketTTL <= 0 {
		c.MarketTTL = d.MarketTTL
	}
	if c.Now == nil {
		c.Now = d.Now
	}
	if c.Protections == nil {
		c.Protections = NewMemoryProtections()
	}
	if c.Attached == nil {
		c.Attached = NewMemoryAttachments()
	}
	if c.Ledger == nil {
		c.Ledger = NewMemoryLedger()
	}
	if c.ProtectionCheck <= 0 {
		c.ProtectionCheck = 2 * time.Second
	}
	if c.Guards == nil {
		g := DefaultGuardConfig()
		c.Guards = &g
	}
	return c
}

// Runtime serves one exchange's operations on NATS through an Adapter.
type Runtime struct {
	cfg     Config
	adapter Adapter
	nc      *nats.Conn
	idem    IdempotencyStore
	ledger  NotionalLedger
	log     *slog.Logger
	secrets *secretCache
	markets *marketCache
	streams *streams      // nil: market data from REST only
	feeds   *accountFeeds // nil: the adapter pushes no account events
	// intervals are the funding intervals REST answers gave, for answers
	// from the stream view, which carry none.
	intervals *intervalCache
	// slots bounds the requests served at once (MaxConcurrent); idle
	// workers take requests from jobs, and a request finding none gets a
	// goroutine of its own.
	slots   chan struct{}
	jobs    chan job
	workers sync.WaitGroup

	protections ProtectionStore
	attached    AttachStore
	attachKick  chan struct{}
	attachMu    sync.Mutex
	attachDirty map[string]bool // credentials whose events kicked the attached loop
	unsettled   *unsettledSet
	leverage    *leverageCache // for maxLeverage on placements
	deadman     *deadMen       // emulated dead man's switches
	stopWatch   context.CancelFunc
	watching    sync.WaitGroup
	inflight    sync.WaitGroup

	// gate orders handlers before the end of in-flight requests: an
	// endpoint drained by micro's Stop still delivers the messages it had
	// buffered, and those are refused once closed is set.
	gate   sync.RWMutex
	closed bool

	mu        sync.Mutex
	svc       micro.Service
	events    *nats.Subscription
	leverages *nats.Subscription
}

// New returns a runtime for adapter; Start puts it on the bus.
func New(cfg Config, adapter Adapter, nc *nats.Conn, idem IdempotencyStore, log *slog.Logger) *Runtime {
	cfg = cfg.withDefaults()
	x := adapter.Exchange()
	r := &Runtime{
		cfg:       cfg,
		adapter:   adapter,
		nc:        nc,
		idem:      idem,
		ledger:    cfg.Ledger,
		log:       log.With("exchange", string(x)),
		secrets:   newSecretCache(nc, cfg.Subjects.Secret(x), cfg.SecretTTL, cfg.Now),
		markets:   newMarketCache(cfg.MarketTTL, cfg.Now),
		intervals: newIntervalCache(cfg.Now),
		streams:   newStreams(cfg.Stream, adapter, nc, cfg.Subjects, log.With("exchange", string(x)), cfg.Now, cfg.Metrics),

		protections: cfg.Protections,
		attached:    cfg.Attached,
		attachKick:  make(chan struct{}, 1),
		unsettled:   newUnsettledSet(),
		leverage:    newLeverageCache(cfg.Now),
	}
	r.deadman = newDeadMen(r)
	r.feeds = newAccountFeeds(r)
	return r
}

// Start registers the micro service (queue group, so replicas share the
// load) and subscribes to credential change events.
func (r *Runtime) Start() error {
	x := r.adapter.Exchange()
	if err := r.feeds.start(); err != nil { // before any request can touch it
		r.log.Warn("account events are not published: this connector holds no private feeds", "err", err)
		r.feeds = nil
	}
	// Slots and workers first: an endpoint takes requests as soon as it is added.
	r.slots = make(chan struct{}, r.cfg.MaxConcurrent)
	r.jobs = make(chan job)
	for range min(idleWorkers, r.cfg.MaxConcurrent) {
		r.workers.Add(1)
		go r.work()
	}
	svc, err := micro.AddService(r.nc, micro.Config{
		Name:        "connector-" + string(x),
		Version:     r.cfg.Version,
		Description: "perpgate connector for " + string(x),
	})
	if err != nil {
		r.stopWorkers()
		return fmt.Errorf("register connector %s: %w", x, err)
	}
	root := svc.AddGroup(r.cfg.Subjects.ExchangeRoot(x))
	groups := map[contract.Group]micro.Group{}
	for _, op := range contract.Operations {
		if op.AtEdge { // the edge answers these itself
			continue
		}
		g, ok := groups[op.Group]
		if !ok {
			g = root.AddGroup(string(op.Group))
			groups[op.Group] = g
		}
		if err := g.AddEndpoint(op.Name, r.handler(op)); err != nil {
			_ = svc.Stop()
			r.stopWorkers()
			return fmt.Errorf("add endpoint %s: %w", op.Name, err)
		}
	}
	sub, err := r.nc.Subscribe(r.cfg.Subjects.Events(), r.onEvent)
	if err != nil {
		_ = svc.Stop()
		r.stopWorkers()
		return fmt.Errorf("subscribe to key events: %w", err)
	}
	levSub, err := r.nc.Subscribe(r.cfg.Subjects.LeverageChanged(x), r.onLeverageChanged)
	if err != nil {
		_ = sub.Unsubscribe()
		_ = svc.Stop()
		r.stopWorkers()
		return fmt.Errorf("subscribe to leverage changes: %w", err)
	}
	watchCtx, stopWatch := context.WithCancel(context.Background())
	r.watching.Add(1)
	go func() { defer r.watching.Done(); r.deadman.watch(watchCtx) }()
	r.watching.Add(1)
	go func() { defer r.watching.Done(); r.attachLoop(watchCtx, r.cfg.ProtectionCheck) }()
	r.watching.Add(1)
	go func() { defer r.watching.Done(); r.settleLoop(watchCtx, r.cfg.ProtectionCheck) }()
	if !r.linksProtection() {
		r.watching.Add(1)
		go func() { defer r.watching.Done(); r.watchLoop(watchCtx, r.cfg.ProtectionCheck) }()
	}
	r.mu.Lock()
	r.svc, r.events, r.leverages, r.stopWatch = svc, sub, levSub, stopWatch
	r.mu.Unlock()
	r.log.Info("connector started", "subject", r.cfg.Subjects.ExchangeRoot(x)+".>")
	return nil
}

// Stop leaves the bus: no new requests are taken and in-flight ones finish.
// It is safe to call twice and after a failed Start.
func (r *Runtime) Stop() error {
	r.mu.Lock()
	svc, sub, levSub, stopWatch := r.svc, r.events, r.leverages, r.stopWatch
	r.svc, r.events, r.leverages, r.stopWatch = nil, nil, nil, nil
	r.mu.Unlock()
	if stopWatch != nil {
		stopWatch()
		r.watching.Wait()
	}
	r.streams.close()
	r.feeds.close()
	var errs []error
	for _, s := range []*nats.Subscription{sub, levSub} {
		if s != nil {
			errs = append(errs, s.Unsubscribe())
		}
	}
	if svc != nil {
		errs = append(errs, svc.Stop())
		r.stopWorkers()
		r.log.Info("connector stopped")
	}
	return errors.Join(errs...)
}

// stopWorkers refuses further requests, lets in-flight ones finish and
// ends the workers.
func (r *Runtime) stopWorkers() {
	r.gate.Lock()
	r.closed = true
	r.gate.Unlock()
	r.inflight.Wait()
	close(r.jobs)
	r.workers.Wait()
}

func (r *Runtime) onEvent(m *nats.Msg) {
	var ev contract.ChangeEvent
	if json.Unmarshal(m.Data, &ev) == nil && ev.Kind == contract.CredentialDeleted {
		r.secrets.drop(ev.CredentialID)
	}
}

// idleWorkers is how many long-lived workers each runtime keeps: enough
// for the requests a replica has in flight at once when its exchange
// answers fast, few enough that their stacks cost nothing to scan.
const idleWorkers = 16

// job is one request handed to a worker.
type job struct {
	op  *contract.Operation
	req micro.Request
}

// handler serves each request on a worker, or on a goroutine of its own
// when every worker is busy: micro calls handlers one at a time per
// endpoint, and upstream calls take hundreds of milliseconds.
// MaxConcurrent slots bound the concurrency (the handler blocks, pushing
// back on NATS, when all are taken). Workers keep their grown stacks
// between requests, where a new goroutine grows its stack again; but a
// pool of MaxConcurrent workers would keep thousands of idle goroutines
// (one pool per connector in perpgate serve) for every garbage collection
// to scan.
func (r *Runtime) handler(op *contract.Operation) micro.Handler {
	return micro.HandlerFunc(func(req micro.Request) {
		r.gate.RLock()
		defer r.gate.RUnlock()
		if r.closed {
			_ = bus.RespondError(req, contract.Errorf(contract.CodeExchangeUnavailable,
				"this %s connector is shutting down; try again", r.adapter.Exchange()))
			return
		}
		r.inflight.Add(1)
		r.slots <- struct{}{}
		select {
		case r.jobs <- job{op: op, req: req}:
		default:
			go func() {
				r.serve(op, req)
				r.done()
			}()
		}
	})
}

func (r *Runtime) work() {
	defer r.workers.Done()
	for j := range r.jobs {
		r.serve(j.op, j.req)
		r.done()
	}
}

// done frees the slot of a served request.
func (r *Runtime) done() {
	<-r.slots
	r.inflight.Done()
}

func (r *Runtime) serve(op *contract.Operation, req micro.Request) {
	creq, deadline, err := contract.ReadConnectorRequest(op.Name, req.Headers(), req.Data())
	if deadline.IsZero() {
		deadline = r.cfg.Now().Add(r.cfg.DefaultTimeout)
	}
	ctx, cancel := bus.WithDeadline(context.Background(), deadline)
	defer cancel()
	if ctx.Err() != nil {
		return // the edge has already answered EXCHANGE_TIMEOUT
	}
	x := string(r.adapter.Exchange())
	ctx = telemetry.WithVenueRequests(ctx, r.cfg.Metrics, x)
	ctx, span := telemetry.StartServerSpan(ctx, req.Headers(), func() string { return "connector " + x + " " + op.Name })
	defer span.End()
	if err != nil {
		_ = bus.AnswerError(r.nc, req.Reply(), contract.Errorf(contract.CodeInvalidRequest, "connector request: %v", err))
		return
	}
	start := time.Now()
	res, err := r.Handle(ctx, creq)
	elapsed := time.Since(start)
	// Built only when something is logged: the success path logs at debug.
	log := func() *slog.Logger {
		return r.log.With("request_id", creq.RequestID, "trace_id", span.SpanContext().TraceID().String(),
			"operation", op.Name, "credential_id", creq.Credential.ID, "duration_ms", elapsed.Milliseconds())
	}
	if err != nil {
		log := log()
		ce := r.publicError(ctx, err, log)
		span.SetStatus(codes.Error, string(ce.Code))
		span.SetAttributes(attribute.String("perpgate.code", string(ce.Code)), attribute.String("perpgate.reason", string(ce.Reason)))
		r.cfg.Metrics.ObserveUpstream(x, op.Name, upstreamFailure(ce), elapsed)
		_ = bus.AnswerError(r.nc, req.Reply(), ce)
		log.Debug("request done", "code", string(ce.Code), "reason", string(ce.Reason))
		return
	}
	r.cfg.Metrics.ObserveUpstream(x, op.Name, "", elapsed)
	raw, ok := res.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(res); err != nil {
			log().Error("internal fault", "err", fmt.Errorf("encode %s result: %w", op.Name, err))
			_ = bus.AnswerError(r.nc, req.Reply(), err) // INTERNAL_ERROR, fixed message
			return
		}
	}
	if ce := tooLarge(op, len(raw), r.nc.MaxPayload()); ce != nil {
		log().Warn("answer larger than the bus carries", "bytes", len(raw), "max_payload", r.nc.MaxPayload())
		_ = bus.AnswerError(r.nc, req.Reply(), ce)
		return
	}
	_ = bus.Answer(r.nc, req.Reply(), raw)
	if r.log.Enabled(ctx, slog.LevelDebug) {
		log().Debug("request done", "code", "OK")
	}
}

// upstreamFailure names the failure for the upstream-errors metric; client
// mistakes (bad input, unknown market) are not upstream failures.
func upstreamFailure(ce *contract.Error) string {
	switch ce.Code {
	case contract.CodeExchangeError:
		return string(ce.Reason)
	case contract.CodeExchangeTimeout, contract.CodeExchangeUnavailable, contract.CodeInternal:
		return string(ce.Code)
	}
	return ""
}

// publicError turns any error into a contract.Error a client may see; the
// cause of an internal fault is logged here and never returned.
func (r *Runtime) publicError(ctx context.Context, err error, log *slog.Logger) *contract.Error {
	if ce, ok := contract.AsError(err); ok {
		if ce.Code == contract.CodeInternal {
			log.Error("internal fault", "err", err)
		}
		return ce
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return contract.Errorf(contract.CodeExchangeTimeout, "the exchange did not answer in time")
	}
	log.Error("internal fault", "err", err)
	ce, _ := contract.AsError(err)
	return ce
}

// Handle runs one operation for one credential and returns its result
// (a contract result struct or raw JSON of a repeated placement). It is the
// transport-free core of the runtime.
func (r *Runtime) Handle(ctx context.Context, req contract.ConnectorRequest) (any, error) {
	op, ok := contract.Lookup(req.Operation)
	if !ok {
		return nil, contract.Errorf(contract.CodeUnknownOperation, "unknown operation %q", req.Operation)
	}
	if op.Name == contract.OpGetCapabilities {
		return capabilities(r.adapter), nil // the venue's, whatever the credential
	}
	cred, err := r.secrets.get(ctx, req.Credential.ID)
	if err != nil {
		return nil, err
	}
	if cred.AccountID != req.AccountID || cred.Exchange != r.adapter.Exchange() {
		return nil, contract.Errorf(contract.CodeCredentialNotFound, "credential %s not found", req.Credential.ID)
	}
	if !op.ReadOnly { // its orders and positions change: their events come through the feed
		var named struct {
			Market string `json:"market"`
		}
		_ = json.Unmarshal(req.Params, &named)
		r.feeds.touch(cred.ID, named.Market)
	}
	params := op.NewParams()
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, params); err != nil {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "parameters of %s do not decode: %v", op.Name, err)
		}
	}
	d := dispatch{r: r, cred: cred, keyID: req.KeyID, guards: req.Guards}
	return d.run(ctx, op, params)
}
