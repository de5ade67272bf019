package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/pkg/health"
	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/telemetry"
)

// Deps are the edge's connections, owned by the caller.
type Deps struct {
	NATS    *nats.Conn
	Limiter ratelimit.Limiter
	Logger  *slog.Logger
	Now     func() time.Time   // nil means time.Now
	Metrics *telemetry.Metrics // optional: served on /metrics when set
	// Checks are readiness checks beyond NATS (the limiter's Redis).
	Checks map[string]health.Check
	// StoreGuard, when set, refuses trading calls while it returns an
	// error: the Redis of rate limits may evict (health.RedisPolicy.Err),
	// the data directory's disk is full (health.DiskSpace.Err).
	StoreGuard func() error
	// AuditSink, when set, stores audit entries in place of the audit
	// stream: the standalone gateway's key store in the same process
	// (filestore.Store.AppendAudit). It must answer only once the entry is
	// written where the keys service reads it.
	AuditSink func(context.Context, contract.AuditEntry) error
}

// Server is one edge instance.
type Server struct {
	cfg      Config
	nc       *nats.Conn
	limiter  ratelimit.Limiter
	log      *slog.Logger
	now      func() time.Time
	subjects contract.Subjects
	dir      *directory
	echo     *echo.Echo
	metrics  *telemetry.Metrics
	checks   map[string]health.Check
	usage    *usageCounter
	audit    *auditor     // nil when Config.Audit is off
	guard    func() error // Deps.StoreGuard
	eventLog *events.Reader
	streams  *openStreams
	interest *feedInterest // who listens to which credential's events, told to the connectors

	mu     sync.Mutex
	http   *http.Server
	ln     net.Listener
	events *nats.Subscription
	done   chan struct{}
	// stopUsage ends the usage reports; usageDone closes after the last.
	stopUsage chan struct{}
	usageDone chan struct{}
}

// New builds an edge; Start or Run puts it on the network.
func New(cfg Config, deps Deps) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.NATS == nil || deps.Limiter == nil || deps.Logger == nil {
		return nil, errors.New("edge: NATS, Limiter and Logger are required")
	}
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{
		cfg:      cfg,
		nc:       deps.NATS,
		limiter:  deps.Limiter,
		log:      deps.Logger,
		now:      now,
		subjects: contract.NewSubjects(cfg.SubjectPrefix),
		metrics:  deps.Metrics,
		checks:   map[string]health.Check{"nats": health.NATSCheck(deps.NATS)},
		guard:    deps.StoreGuard,
	}
	for name, c := range deps.Checks {
		s.checks[name] = c
	}
	s.dir = newDirectory(s.nc, s.subjects, cfg.CacheTTL, now)
	s.streams = newOpenStreams()
	s.dir.observe = s.streams.onChange
	reader, err := events.NewReader(s.nc, cfg.Events())
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	reader.SetLogger(s.log.With("component", "events"))
	s.eventLog = reader
	s.interest = newFeedInterest(s.nc, s.subjects)
	s.usage = newUsageCounter()
	if cfg.Audit && deps.AuditSink != nil {
		s.audit = &auditor{sink: deps.AuditSink}
	} else if cfg.Audit {
		a, err := newAuditor(s.nc, s.subjects)
		if err != nil {
			return nil, fmt.Errorf("edge: audit stream: %w", err)
		}
		s.audit = a
	}
	s.echo = s.routes()
	return s, nil
}

// HealthHandler serves /healthz, /readyz with each failed check named and
// /metrics, for the health port that only operators reach.
func (s *Server) HealthHandler() http.Handler {
	var metrics http.Handler
	if s.metrics != nil {
		metrics = s.metrics.Handler()
	}
	return health.Handler(s.checks, metrics)
}

// Handler is the edge's HTTP handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.echo }

// Echo exposes the router so other front ends (MCP) mount on the same server.
func (s *Server) Echo() *echo.Echo { return s.echo }

// Start subscribes to change events, listens (a taken port fails here) and
// serves in the background.
func (s *Server) Start() error {
	sub, err := s.dir.subscribe()
	if err != nil {
		return fmt.Errorf("subscribe to key events: %w", err)
	}
	ln, err := net.Listen("tcp", s.cfg.ListenAddr)
	if err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("listen on %s (set by %s): %w", s.cfg.ListenAddr, listenAddrVar, err)
	}
	srv := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(s.streams.closeAll) // event streams never go idle by themselves
	done := make(chan struct{})
	stopUsage, usageDone := make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	s.http, s.ln, s.events, s.done = srv, ln, sub, done
	s.stopUsage, s.usageDone = stopUsage, usageDone
	s.mu.Unlock()
	go func() {
		defer close(usageDone)
		s.reportUsageEvery(usageFlushEvery, stopUsage)
	}()
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("http server stopped", "err", err)
		}
	}()
	s.log.Info("edge listening", "addr", ln.Addr().String())
	return nil
}

// Addr is the listening address once started.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Run starts the edge and serves until ctx ends, then shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	return s.Close()
}

// Close stops accepting requests and lets in-flight ones finish within the
// shutdown grace. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	srv, sub, done := s.http, s.events, s.done
	stopUsage, usageDone := s.stopUsage, s.usageDone
	s.http, s.events, s.stopUsage = nil, nil, nil
	s.mu.Unlock()
	var errs []error
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
		defer cancel()
		errs = append(errs, srv.Shutdown(ctx))
		<-done
		s.log.Info("edge stopped")
	}
	if stopUsage != nil { // after the last request, so its count is in the last report
		close(stopUsage)
		<-usageDone
	}
	if sub != nil {
		errs = append(errs, sub.Unsubscribe())
	}
	s.interest.close()
	return errors.Join(errs...)
}
