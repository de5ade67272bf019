package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// ConnectorRequest is what the edge asks of a connector: one validated
// operation for one credential. Params is the operation's parameter struct
// re-encoded after validation, so the connector decodes it strictly.
//
// On NATS the operation is the subject and the rest is framed ahead of
// Params in the message body (AppendFrame, ReadConnectorRequest): each hop
// then encodes and decodes the parameters once, not an envelope around
// them as well. Credential carries only its ID there; the connector reads
// the rest with the secret.
type ConnectorRequest struct {
	RequestID  string          `json:"requestId"`
	Operation  string          `json:"operation"`
	AccountID  string          `json:"accountId"`
	Credential CredentialInfo  `json:"credential"`
	Params     json.RawMessage `json:"params"`
	// KeyID and Guards carry the calling key's trading guards to the
	// connector, which resolves markets, rounds and prices orders, and so
	// judges allowedMarkets and the notional caps; nil when the key has none.
	KeyID  string  `json:"keyId,omitempty"`
	Guards *Guards `json:"guards,omitempty"`
}

// KeyLookupRequest asks the keys service for the key with this SHA-256 (hex).
type KeyLookupRequest struct {
	Hash string `json:"hash"`
}

// CredentialListRequest asks for an account's credentials (metadata only).
type CredentialListRequest struct {
	AccountID string `json:"accountId"`
}

// CredentialLookupRequest asks for a credential's metadata.
type CredentialLookupRequest struct {
	CredentialID string `json:"credentialId"`
}

// SecretRequest asks the keys service to release a credential's secret to
// the connector of its exchange.
type SecretRequest struct {
	CredentialID string `json:"credentialId"`
}

// SecretResponse carries a credential with its decrypted secret. It only
// travels from keys to the credential's own connector.
type SecretResponse struct {
	Credential CredentialInfo `json:"credential"`
	Secret     Secret         `json:"secret"`
}

// Secret is a credential's secret fields as a raw JSON object. It prints and
// logs as a mask; only Raw and json.Marshal expose it.
type Secret json.RawMessage

// String masks the secret.
func (Secret) String() string { return "[secret]" }

// GoString masks the secret.
func (Secret) GoString() string { return "[secret]" }

// LogValue masks the secret in slog output.
func (Secret) LogValue() slog.Value { return slog.StringValue("[secret]") }

// MarshalJSON emits the raw object (needed to carry it to the connector).
func (s Secret) MarshalJSON() ([]byte, error) {
	if len(s) == 0 {
		return []byte("{}"), nil
	}
	return json.RawMessage(s).MarshalJSON()
}

// UnmarshalJSON keeps the raw object.
func (s *Secret) UnmarshalJSON(b []byte) error {
	*s = append((*s)[:0], b...)
	return nil
}

// Decode unmarshals the secret into v.
func (s Secret) Decode(v any) error { return json.Unmarshal(s, v) }

// ChangeKind names a ChangeEvent.
type ChangeKind string

// Change events published by the keys service.
const (
	KeyRevoked        ChangeKind = "key.revoked"
	KeyUpdated        ChangeKind = "key.updated"
	CredentialDeleted ChangeKind = "credential.deleted"
)

// ChangeEvent tells caches to drop an entry. Edges drop the key with this
// hash or the credential with this id.
type ChangeEvent struct {
	Kind         ChangeKind `json:"kind"`
	KeyID        string     `json:"keyId,omitempty"`
	KeyHash      string     `json:"keyHash,omitempty"`
	CredentialID string     `json:"credentialId,omitempty"`
}

// Header fields of a connector request besides HeaderRequestID.
const (
	HeaderAccountID    = "Perpgate-Account-Id"
	HeaderCredentialID = "Perpgate-Credential-Id"
	HeaderKeyID        = "Perpgate-Key-Id" // only with Guards
	HeaderGuards       = "Perpgate-Guards" // JSON; only for a key with trading guards
)

// Header is r's envelope as NATS header fields (a nats.Header is this map
// type); Params goes as the body.
func (r ConnectorRequest) Header() (map[string][]string, error) {
	// One backing array for the values, and room for the fields the bus
	// adds (deadline, trace context): this runs on every request.
	vals := [...]string{r.RequestID, r.AccountID, r.Credential.ID, r.KeyID, ""}
	h := make(map[string][]string, 7)
	h[HeaderRequestID] = vals[0:1:1]
	h[HeaderAccountID] = vals[1:2:2]
	h[HeaderCredentialID] = vals[2:3:3]
	if r.Guards != nil {
		g, err := json.Marshal(r.Guards)
		if err != nil {
			return nil, err
		}
		vals[4] = string(g)
		h[HeaderKeyID], h[HeaderGuards] = vals[3:4:4], vals[4:5:5]
	}
	return h, nil
}

// ReadConnectorRequest is the request of operation op in a NATS message
// with header fields h and body, in any form an edge sends (framed, header
// fields, or the JSON of 0.1.0), and the deadline it carries (zero when
// none or unreadable).
func ReadConnectorRequest(op string, h map[string][]string, body []byte) (ConnectorRequest, time.Time, error) {
	if rest, ok := bytes.CutPrefix(body, frameMagic); ok {
		return readFrame(op, rest)
	}
	deadline, _ := ReadDeadline(h)
	r, err := readHeaderForm(op, h, body)
	return r, deadline, err
}

// ReadDeadline reads the absolute deadline in header fields h
// (HeaderDeadline); ok is false when they carry none or an unreadable one.
func ReadDeadline(h map[string][]string) (_ time.Time, ok bool) {
	v := h[HeaderDeadline]
	if len(v) == 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v[0])
	return t, err == nil
}

// readHeaderForm reads a request whose envelope is in header fields h and
// whose body is params, or a 0.1.0 request whose body is all of it.
func readHeaderForm(op string, h map[string][]string, params []byte) (ConnectorRequest, error) {
	first := func(k string) string {
		if v := h[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if _, ok := h[HeaderAccountID]; !ok && len(params) > 0 {
		// An edge of 0.1.0 sends the whole request as a JSON body; reading
		// it lets connectors be upgraded before the edges.
		var r ConnectorRequest
		if err := json.Unmarshal(params, &r); err == nil && r.AccountID != "" && r.Credential.ID != "" {
			r.Operation = op
			return r, nil
		}
	}
	r := ConnectorRequest{RequestID: first(HeaderRequestID), Operation: op, AccountID: first(HeaderAccountID),
		Credential: CredentialInfo{ID: first(HeaderCredentialID)}, Params: params, KeyID: first(HeaderKeyID)}
	if r.AccountID == "" || r.Credential.ID == "" {
		return r, fmt.Errorf("connector request without %s or %s", HeaderAccountID, HeaderCredentialID)
	}
	if g := first(HeaderGuards); g != "" {
		r.Guards = new(Guards)
		if err := json.Unmarshal([]byte(g), r.Guards); err != nil {
			return r, fmt.Errorf("%s: %w", HeaderGuards, err)
		}
	}
	return r, nil
}
