package connector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/health"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/redis/go-redis/v9"
)

// ServiceConfig is what every connector process needs besides its
// exchange's own settings.
type ServiceConfig struct {
	NATSURL       string            // PERPGATE_NATS_URL
	RedisURL      string            // PERPGATE_REDIS_URL: shared idempotency store; empty keeps it in process (one replica only)
	SubjectPrefix string            // PERPGATE_SUBJECT_PREFIX
	HealthAddr    string            // PERPGATE_HEALTH_ADDR: /healthz, /readyz and /metrics; empty serves none
	NATSAuth      bus.Auth          // PERPGATE_NATS_USER, PERPGATE_NATS_PASSWORD, PERPGATE_NATS_INBOX_PREFIX
	Stream        StreamConfig      // PERPGATE_STREAM*, see LoadStreamConfig
	Guards        GuardConfig       // PERPGATE_MARKET_SLIPPAGE_BPS, see LoadGuardConfig
	AccountFeeds  AccountFeedConfig // PERPGATE_EVENTS_IDLE and the event stream's settings

	lookup func(string) (string, bool) // for the standard OTEL_* settings
}

// LoadServiceConfig reads the common connector settings through lookup.
func LoadServiceConfig(lookup func(string) (string, bool)) (ServiceConfig, error) {
	c := ServiceConfig{NATSURL: "nats://127.0.0.1:4222", SubjectPrefix: contract.DefaultSubjectPrefix, HealthAddr: ":8082", lookup: lookup}
	if v, ok := lookup("PERPGATE_NATS_URL"); ok && v != "" {
		c.NATSURL = v
	}
	if v, ok := lookup("PERPGATE_REDIS_URL"); ok {
		c.RedisURL = v
	}
	if v, ok := lookup("PERPGATE_SUBJECT_PREFIX"); ok && v != "" {
		c.SubjectPrefix = v
	}
	if v, ok := lookup("PERPGATE_HEALTH_ADDR"); ok {
		c.HealthAddr = v
	}
	var err1, err2, err3, err4 error
	c.NATSAuth, err1 = bus.LoadAuth(lookup)
	c.Stream, err2 = LoadStreamConfig(lookup)
	c.Guards, err3 = LoadGuardConfig(lookup)
	c.AccountFeeds, err4 = LoadAccountFeedConfig(lookup, contract.NewSubjects(c.SubjectPrefix))
	return c, errors.Join(err1, err2, err3, err4)
}

// drainTimeout bounds how long a stopping service flushes its NATS connection.
const drainTimeout = 10 * time.Second

// Serve runs adapter as a connector process until ctx ends: it connects to
// NATS (and Redis when configured), starts the runtime and, on cancel,
// stops taking requests, lets in-flight ones finish and drains.
func Serve(ctx context.Context, cfg ServiceConfig, adapter Adapter, log *slog.Logger) (err error) {
	name := "connector-" + string(adapter.Exchange())
	if cfg.lookup != nil {
		shutdown, err := telemetry.SetupTracing(ctx, "perpgate-"+name, cfg.lookup)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, shutdown(context.WithoutCancel(ctx))) }()
	}
	nc, err := bus.Connect(cfg.NATSURL, name, cfg.NATSAuth, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, bus.Drain(nc, drainTimeout)) }()
	checks := map[string]health.Check{"nats": health.NATSCheck(nc)}
	var idem IdempotencyStore = NewMemoryIdempotency(nil)
	var protections ProtectionStore = NewMemoryProtections()
	var ledger NotionalLedger = NewMemoryLedger()
	if cfg.RedisURL != "" {
		opts, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return fmt.Errorf("PERPGATE_REDIS_URL: %w", err)
		}
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		policy := health.WatchRedisPolicy(ctx, rdb, log)
		idem = GuardIdempotency(NewRedisIdempotency(rdb, cfg.SubjectPrefix+":idem:"), policy.Err)
		protections = NewRedisProtections(rdb, cfg.SubjectPrefix+":protect:"+string(adapter.Exchange())+":")
		ledger = NewRedisLedger(rdb, cfg.SubjectPrefix+":notional:")
		checks["redis"] = policy.Check
	} else {
		log.Warn("PERPGATE_REDIS_URL is unset: clientOrderId deduplication is per replica")
	}
	metrics := telemetry.NewMetrics()
	stopHealth, err := health.Serve(ctx, cfg.HealthAddr, health.Handler(checks, metrics.Handler()), log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopHealth()) }()
	rt := New(Config{Subjects: contract.NewSubjects(cfg.SubjectPrefix), Metrics: metrics, Protections: protections, Ledger: ledger,
		Stream: cfg.Stream, Guards: &cfg.Guards, AccountFeeds: cfg.AccountFeeds}, adapter, nc, idem, log)
	if err := rt.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	return rt.Stop()
}
