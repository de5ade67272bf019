package bus

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// Auth identifies a service to a NATS server that enforces per-service
// permissions (deploy/nats.conf). The zero Auth connects without a user and
// with nats.go's default inbox prefix.
type Auth struct {
	User     string   // PERPGATE_NATS_USER
	Password Password // PERPGATE_NATS_PASSWORD
	// InboxPrefix roots the subjects replies come back on
	// (PERPGATE_NATS_INBOX_PREFIX). Each service gets its own, so the
	// server can let a user subscribe to its own replies only: with a
	// shared "_INBOX.>" anyone could read the secrets keys sends to a
	// connector. It defaults to "_INBOX_" + User when a user is set.
	InboxPrefix string
}

// LoadAuth reads the NATS identity of a service through lookup. The error
// lists every invalid setting.
func LoadAuth(lookup func(string) (string, bool)) (Auth, error) {
	var a Auth
	if v, ok := lookup("PERPGATE_NATS_USER"); ok {
		a.User = v
	}
	if v, ok := lookup("PERPGATE_NATS_PASSWORD"); ok {
		a.Password = Password(v)
	}
	if v, ok := lookup("PERPGATE_NATS_INBOX_PREFIX"); ok {
		a.InboxPrefix = v
	}
	if a.InboxPrefix == "" && a.User != "" {
		a.InboxPrefix = "_INBOX_" + a.User
	}
	var errs []error
	if a.Password != "" && a.User == "" {
		errs = append(errs, errors.New("PERPGATE_NATS_PASSWORD is set but PERPGATE_NATS_USER is not"))
	}
	if strings.ContainsAny(a.User, " \t\r\n") {
		errs = append(errs, fmt.Errorf("PERPGATE_NATS_USER: %q contains white space", a.User))
	}
	if p := a.InboxPrefix; p != "" && (strings.ContainsAny(p, "*> \t\r\n") ||
		strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..")) {
		errs = append(errs, fmt.Errorf("PERPGATE_NATS_INBOX_PREFIX: %q is not a subject without wildcards such as _INBOX_edge", p))
	}
	return a, errors.Join(errs...)
}

// Password is a NATS password. It prints, logs and encodes as a mask;
// Reveal returns the value.
type Password string

// Reveal returns the password itself.
func (p Password) Reveal() string { return string(p) }

// String returns a mask, or "" when no password is set.
func (p Password) String() string {
	if p == "" {
		return ""
	}
	return "[redacted]"
}

// GoString returns a mask, so %#v cannot reach the value.
func (p Password) GoString() string { return `bus.Password("` + p.String() + `")` }

// LogValue returns a mask for log/slog.
func (p Password) LogValue() slog.Value { return slog.StringValue(p.String()) }

// MarshalJSON encodes the mask, never the value.
func (p Password) MarshalJSON() ([]byte, error) { return []byte(`"` + p.String() + `"`), nil }
