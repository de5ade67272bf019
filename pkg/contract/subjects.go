package contract

import "strings"

// DefaultSubjectPrefix roots every perpgate NATS subject. Tests use a unique
// prefix so parallel runs on one server never meet.
const DefaultSubjectPrefix = "perpgate"

// Subjects names every NATS subject under one prefix. deploy/nats.conf grants
// permissions on these same patterns.
type Subjects struct{ Prefix string }

// NewSubjects returns the subjects under prefix (DefaultSubjectPrefix when empty).
func NewSubjects(prefix string) Subjects {
	if prefix == "" {
		prefix = DefaultSubjectPrefix
	}
	return Subjects{Prefix: prefix}
}

// ExchangeRoot is the micro group of one exchange's connector: operations
// live at ExchangeRoot.<group>.<operation>.
func (s Subjects) ExchangeRoot(x Exchange) string { return s.Prefix + ".exchange." + string(x) }

// Operation is the subject the edge requests for op on exchange x.
func (s Subjects) Operation(x Exchange, op *Operation) string {
	return s.ExchangeRoot(x) + "." + string(op.Group) + "." + op.Name
}

// KeysRoot is the micro group of the keys service.
func (s Subjects) KeysRoot() string { return s.Prefix + ".keys" }

// KeyLookup answers a KeyLookupRequest with a KeyInfo.
func (s Subjects) KeyLookup() string { return s.KeysRoot() + ".apikey" }

// CredentialLookup answers a CredentialLookupRequest with a CredentialInfo.
func (s Subjects) CredentialLookup() string { return s.KeysRoot() + ".credential" }

// CredentialList answers a CredentialListRequest with the account's
// credentials (metadata only).
func (s Subjects) CredentialList() string { return s.KeysRoot() + ".credentials" }

// SecretRoot is the group under which credential secrets are released, one
// endpoint per exchange.
func (s Subjects) SecretRoot() string { return s.KeysRoot() + ".secret" }

// Secret releases the secrets of exchange x's credentials; only that
// exchange's connector may request it.
func (s Subjects) Secret(x Exchange) string { return s.SecretRoot() + "." + string(x) }

// Events is where the keys service publishes ChangeEvents.
func (s Subjects) Events() string { return s.Prefix + ".events.keys" }

// Usage is where edges publish UsageReports for the keys service.
func (s Subjects) Usage() string { return s.Prefix + ".usage" }

// Audit is the subject of audit entries, kept in the AuditStream JetStream
// stream until the keys service has stored them.
func (s Subjects) Audit() string { return s.Prefix + ".audit" }

// AuditStream names the JetStream stream holding audit entries in transit.
func (s Subjects) AuditStream() string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_", "*", "_", ">", "_").Replace(s.Prefix)) + "_AUDIT"
}

// AuditConsumer is the keys service's durable consumer of AuditStream.
const AuditConsumer = "keys-audit"

// Header names carried on NATS requests.
const (
	HeaderDeadline  = "Perpgate-Deadline"   // RFC 3339 (nanoseconds) absolute deadline
	HeaderRequestID = "Perpgate-Request-Id" // UUID of the inbound HTTP request
)

// Stream roots the market-data stream of exchange x's env network: the
// holder of its sockets publishes <root>.m.<market> and <root>.beat, and
// replicas ask for markets on <root>.want.
func (s Subjects) Stream(x Exchange, env Environment) string {
	return s.Prefix + ".stream." + string(x) + "." + string(env)
}

// LeverageChanged is where a connector replica tells the others of its
// exchange that a setLeverage went through, so they drop the leverage they
// cached for the maxLeverage guard. It lies under the exchange's stream
// subjects, which every replica of that connector may use.
func (s Subjects) LeverageChanged(x Exchange) string {
	return s.Prefix + ".stream." + string(x) + ".leverage"
}

// StreamLeases names the JetStream KV bucket whose keys say which replica
// holds each venue's sockets.
func (s Subjects) StreamLeases() string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_", "*", "_", ">", "_").Replace(s.Prefix)) + "_STREAM_LEASES"
}

// DeadManSwitches names the JetStream KV bucket holding the deadlines of
// the dead man's switches the gateway emulates (setDeadManSwitch), one key
// per <exchange>.<credentialId>.<market or _all>.
func (s Subjects) DeadManSwitches() string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_", "*", "_", ">", "_").Replace(s.Prefix)) + "_DEADMAN"
}
