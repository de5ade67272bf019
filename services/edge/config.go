package edge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
)

// Config configures the edge service.
type Config struct {
	ListenAddr     string        // PERPGATE_LISTEN_ADDR
	HealthAddr     string        // PERPGATE_HEALTH_ADDR: /readyz with details and /metrics; empty serves none
	NATSURL        string        // PERPGATE_NATS_URL
	NATSAuth       bus.Auth      // PERPGATE_NATS_USER, PERPGATE_NATS_PASSWORD, PERPGATE_NATS_INBOX_PREFIX
	RedisURL       string        // PERPGATE_REDIS_URL
	SubjectPrefix  string        // PERPGATE_SUBJECT_PREFIX
	RequestTimeout time.Duration // PERPGATE_REQUEST_TIMEOUT: deadline of one request end to end
	ShutdownGrace  time.Duration // PERPGATE_SHUTDOWN_GRACE: how long in-flight requests may finish
	CacheTTL       time.Duration // PERPGATE_EDGE_CACHE_TTL: bound on key metadata staleness if an event is lost
	// Audit writes every trading call to the audit stream before routing it
	// (JetStream, created by the keys service); PERPGATE_AUDIT=off turns it
	// off for a NATS without JetStream.
	Audit bool
	// TierLimits overrides the SPEC §8 rate limits of a tier, for operators
	// who sell different plans: PERPGATE_TIER_LIMITS_FREE|BUILDER|PRO as
	// "perMinute/perDay", e.g. "30/5000".
	TierLimits map[contract.Tier]contract.TierLimits
	// MCPSessionIdle closes an MCP SSE session no message reached for
	// this long (PERPGATE_MCP_SESSION_IDLE).
	MCPSessionIdle time.Duration
	// EventRetention (PERPGATE_EVENTS_RETENTION) and JetStreamReplicas
	// (PERPGATE_JETSTREAM_REPLICAS) shape the account event stream.
	EventRetention    time.Duration
	JetStreamReplicas int
	// EventKeepAlive is how often an idle SSE stream gets a comment line,
	// so proxies do not close it (15 s; tests shorten it).
	EventKeepAlive time.Duration
}

// Events is the account event stream's configuration.
func (c Config) Events() events.Config {
	return events.Config{Subjects: contract.NewSubjects(c.SubjectPrefix), Retention: c.EventRetention, Replicas: c.JetStreamReplicas}
}

// DefaultConfig returns the defaults documented in the README.
func DefaultConfig() Config {
	return Config{
		ListenAddr:        ":8080",
		HealthAddr:        ":8082",
		NATSURL:           "nats://127.0.0.1:4222",
		RedisURL:          "redis://127.0.0.1:6379/0",
		SubjectPrefix:     "perpgate",
		RequestTimeout:    10 * time.Second,
		ShutdownGrace:     15 * time.Second,
		CacheTTL:          time.Minute,
		Audit:             true,
		EventRetention:    events.DefaultRetention,
		JetStreamReplicas: 1,
		EventKeepAlive:    15 * time.Second,
		MCPSessionIdle:    10 * time.Minute,
		TierLimits: map[contract.Tier]contract.TierLimits{
			contract.TierFree:    contract.TierFree.Limits(),
			contract.TierBuilder: contract.TierBuilder.Limits(),
			contract.TierPro:     contract.TierPro.Limits(),
		},
	}
}

// ParseTierLimits reads a "perMinute/perDay" override.
func ParseTierLimits(v string, base contract.TierLimits) (contract.TierLimits, error) {
	m, d, ok := strings.Cut(v, "/")
	perMin, err1 := strconv.Atoi(strings.TrimSpace(m))
	perDay, err2 := strconv.Atoi(strings.TrimSpace(d))
	if !ok || err1 != nil || err2 != nil || perMin <= 0 || perDay <= 0 {
		return base, fmt.Errorf("%q is not perMinute/perDay such as 30/5000", v)
	}
	base.PerMinute, base.PerDay = perMin, perDay
	return base, nil
}

// listenAddrVar names the listen setting; a taken port's error names it.
const listenAddrVar = "PERPGATE_LISTEN_ADDR"

// LoadConfig reads PERPGATE_* settings through lookup over the defaults.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c := DefaultConfig()
	var errs []error
	str := func(name string, dst *string) {
		if v, ok := lookup(name); ok && v != "" {
			*dst = v
		}
	}
	dur := func(name string, dst *time.Duration) {
		if v, ok := lookup(name); ok && v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				if n, nerr := strconv.Atoi(v); nerr == nil {
					d, err = time.Duration(n)*time.Second, nil
				}
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a duration such as 10s", name, v))
				return
			}
			*dst = d
		}
	}
	str(listenAddrVar, &c.ListenAddr)
	if v, ok := lookup("PERPGATE_HEALTH_ADDR"); ok {
		c.HealthAddr = v
	}
	str("PERPGATE_NATS_URL", &c.NATSURL)
	str("PERPGATE_REDIS_URL", &c.RedisURL)
	str("PERPGATE_SUBJECT_PREFIX", &c.SubjectPrefix)
	var err error
	if c.NATSAuth, err = bus.LoadAuth(lookup); err != nil {
		errs = append(errs, err)
	}
	dur("PERPGATE_REQUEST_TIMEOUT", &c.RequestTimeout)
	dur("PERPGATE_SHUTDOWN_GRACE", &c.ShutdownGrace)
	dur("PERPGATE_EDGE_CACHE_TTL", &c.CacheTTL)
	dur("PERPGATE_MCP_SESSION_IDLE", &c.MCPSessionIdle)
	if v, ok := lookup("PERPGATE_AUDIT"); ok && v != "" {
		switch v {
		case "on":
			c.Audit = true
		case "off":
			c.Audit = false
		default:
			errs = append(errs, fmt.Errorf("PERPGATE_AUDIT: %q is neither on nor off", v))
		}
	}
	for tier, base := range c.TierLimits {
		name := "PERPGATE_TIER_LIMITS_" + strings.ToUpper(string(tier))
		if v, ok := lookup(name); ok && v != "" {
			l, err := ParseTierLimits(v, base)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				continue
			}
			c.TierLimits[tier] = l
		}
	}
	ev, err := events.LoadConfig(lookup, contract.Subjects{})
	errs = append(errs, err)
	c.EventRetention, c.JetStreamReplicas = ev.Retention, ev.Replicas
	errs = append(errs, c.Validate())
	return c, errors.Join(errs...)
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	if c.ListenAddr == "" {
		errs = append(errs, errors.New("PERPGATE_LISTEN_ADDR must not be empty"))
	}
	if c.RequestTimeout <= 0 {
		errs = append(errs, errors.New("PERPGATE_REQUEST_TIMEOUT must be positive"))
	}
	if c.ShutdownGrace <= 0 {
		errs = append(errs, errors.New("PERPGATE_SHUTDOWN_GRACE must be positive"))
	}
	if c.EventKeepAlive <= 0 {
		errs = append(errs, errors.New("the event stream keep-alive interval must be positive"))
	}
	if c.CacheTTL <= 0 {
		errs = append(errs, errors.New("PERPGATE_EDGE_CACHE_TTL must be positive"))
	}
	if c.MCPSessionIdle <= 0 {
		errs = append(errs, errors.New("PERPGATE_MCP_SESSION_IDLE must be positive"))
	}
	return errors.Join(errs...)
}
