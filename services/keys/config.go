package keys

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
)

// Masked is a configuration secret (admin token, master key). It prints,
// logs and encodes as a mask; Reveal returns the value.
type Masked string

const maskText = "[redacted]"

// Reveal returns the secret itself.
func (m Masked) Reveal() string { return string(m) }

// String returns a mask, or "" when the secret is unset.
func (m Masked) String() string {
	if m == "" {
		return ""
	}
	return maskText
}

// GoString returns a mask, so %#v cannot reach the value.
func (m Masked) GoString() string { return `keys.Masked("` + m.String() + `")` }

// LogValue returns a mask for log/slog.
func (m Masked) LogValue() slog.Value { return slog.StringValue(m.String()) }

// MarshalJSON encodes the mask, never the value.
func (m Masked) MarshalJSON() ([]byte, error) { return []byte(`"` + m.String() + `"`), nil }

// MasterKeySize is the length in bytes of the decoded PERPGATE_MASTER_KEY.
const MasterKeySize = 32

// Config configures the keys service.
type Config struct {
	DatabaseURL   Masked   // PERPGATE_DATABASE_URL: Postgres DSN; empty selects the file store
	DataDir       string   // PERPGATE_DATA_DIR: where the file store keeps its state
	NATSURL       string   // PERPGATE_NATS_URL
	NATSAuth      bus.Auth // PERPGATE_NATS_USER, PERPGATE_NATS_PASSWORD, PERPGATE_NATS_INBOX_PREFIX
	AdminAddr     string   // PERPGATE_ADMIN_ADDR: admin API listen address; empty disables it
	AdminToken    Masked   // PERPGATE_ADMIN_TOKEN: bearer token of the admin API
	MasterKey     Masked   // PERPGATE_MASTER_KEY: base64 of 32 bytes sealing credential secrets
	SubjectPrefix string   // PERPGATE_SUBJECT_PREFIX
	HealthAddr    string   // PERPGATE_HEALTH_ADDR: /healthz, /readyz and /metrics; empty serves none
	// JetStreamReplicas (PERPGATE_JETSTREAM_REPLICAS) is the replica count
	// of the audit stream the service creates.
	JetStreamReplicas int
	// AuditRetention: PERPGATE_AUDIT_RETENTION and PERPGATE_AUDIT_MAX_MB;
	// the zero value keeps everything.
	AuditRetention AuditRetention
}

// DefaultConfig returns the defaults documented in the README. AdminToken
// and MasterKey have none.
func DefaultConfig() Config {
	return Config{
		DataDir:           "./.perpgate",
		NATSURL:           "nats://127.0.0.1:4222",
		AdminAddr:         "127.0.0.1:8081",
		SubjectPrefix:     "perpgate",
		HealthAddr:        ":8082",
		AuditRetention:    DefaultAuditRetention(),
		JetStreamReplicas: 1,
	}
}

// adminAddrVar names the admin listen setting; a taken port's error names it.
const adminAddrVar = "PERPGATE_ADMIN_ADDR"

// LoadConfig reads PERPGATE_* settings through lookup over the defaults and
// validates the result; the error lists every problem.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c := DefaultConfig()
	str := func(name string, dst *string) {
		if v, ok := lookup(name); ok && v != "" {
			*dst = v
		}
	}
	masked := func(name string, dst *Masked) {
		if v, ok := lookup(name); ok && v != "" {
			*dst = Masked(v)
		}
	}
	masked("PERPGATE_DATABASE_URL", &c.DatabaseURL)
	str("PERPGATE_DATA_DIR", &c.DataDir)
	str("PERPGATE_NATS_URL", &c.NATSURL)
	str(adminAddrVar, &c.AdminAddr)
	masked("PERPGATE_ADMIN_TOKEN", &c.AdminToken)
	masked("PERPGATE_MASTER_KEY", &c.MasterKey)
	str("PERPGATE_SUBJECT_PREFIX", &c.SubjectPrefix)
	if v, ok := lookup("PERPGATE_HEALTH_ADDR"); ok {
		c.HealthAddr = v
	}
	var authErr, retErr error
	c.NATSAuth, authErr = bus.LoadAuth(lookup)
	c.AuditRetention, retErr = LoadAuditRetention(lookup)
	ev, evErr := events.LoadConfig(lookup, contract.Subjects{})
	c.JetStreamReplicas = ev.Replicas
	return c, errors.Join(authErr, evErr, retErr, c.Validate())
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	if c.DatabaseURL == "" && c.DataDir == "" {
		errs = append(errs, errors.New("PERPGATE_DATA_DIR must not be empty when PERPGATE_DATABASE_URL is unset"))
	}
	if c.NATSURL == "" {
		errs = append(errs, errors.New("PERPGATE_NATS_URL must not be empty"))
	}
	if c.SubjectPrefix == "" {
		errs = append(errs, errors.New("PERPGATE_SUBJECT_PREFIX must not be empty"))
	}
	if c.AdminAddr != "" && c.AdminToken == "" {
		errs = append(errs, errors.New("PERPGATE_ADMIN_TOKEN is required to serve the admin API"))
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		errs = append(errs, errors.New("PERPGATE_ADMIN_TOKEN must be at least 16 characters"))
	}
	if _, err := c.masterKey(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// masterKey decodes MasterKey.
func (c Config) masterKey() ([]byte, error) {
	if c.MasterKey == "" {
		return nil, errors.New("PERPGATE_MASTER_KEY is required (base64 of 32 random bytes, e.g. `openssl rand -base64 32`)")
	}
	b, err := base64.StdEncoding.DecodeString(c.MasterKey.Reveal())
	if err != nil {
		// The decoder's error would quote part of the key; say what to fix instead.
		return nil, errors.New("PERPGATE_MASTER_KEY is not valid standard base64")
	}
	if len(b) != MasterKeySize {
		return nil, fmt.Errorf("PERPGATE_MASTER_KEY must decode to %d bytes, got %d", MasterKeySize, len(b))
	}
	return b, nil
}
