package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A connector request on NATS is framed in the message body, ahead of the
// parameters, as two lines:
//
//	PGR1 <request id> <account id> <credential id> <deadline> <key id or ->
//	<the key's guards as JSON, or nothing>
//	<params>
//
// with the deadline in Unix nanoseconds (0: none). The envelope went in
// NATS header fields before; those are a map on each side (built by the
// edge, parsed by nats.go at the connector), about a tenth of what a read
// allocated end to end. Connectors still read the header form, which the
// edge sends when a field cannot be framed, and the JSON form of 0.1.0.
var frameMagic = []byte("PGR1 ")

// AppendFrame appends r framed as above to b, with deadline (zero: none).
// ok is false when a field cannot be framed: an ID that is empty or holds a
// space or a line break, or a key ID of "-".
func (r ConnectorRequest) AppendFrame(b []byte, deadline time.Time) (_ []byte, ok bool) {
	if !frameable(r.RequestID) || !frameable(r.AccountID) || !frameable(r.Credential.ID) ||
		r.KeyID == "-" || (r.KeyID != "" && !frameable(r.KeyID)) {
		return b, false
	}
	var guards []byte
	if r.Guards != nil {
		g, err := json.Marshal(r.Guards) // json.Marshal escapes line breaks
		if err != nil {
			return b, false
		}
		guards = g
	}
	keyID := r.KeyID
	if keyID == "" {
		keyID = "-"
	}
	var nanos int64
	if !deadline.IsZero() {
		nanos = deadline.UnixNano()
	}
	b = append(b, frameMagic...)
	b = append(b, r.RequestID...)
	b = append(b, ' ')
	b = append(b, r.AccountID...)
	b = append(b, ' ')
	b = append(b, r.Credential.ID...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, nanos, 10)
	b = append(b, ' ')
	b = append(b, keyID...)
	b = append(b, '\n')
	b = append(b, guards...)
	b = append(b, '\n')
	return append(b, r.Params...), true
}

func frameable(id string) bool {
	return id != "" && !strings.ContainsAny(id, " \r\n")
}

// readFrame reads the request of operation op from body after frameMagic,
// and its deadline (zero when it carries none).
func readFrame(op string, body []byte) (ConnectorRequest, time.Time, error) {
	line, rest, ok := bytes.Cut(body, []byte{'\n'})
	if !ok {
		return ConnectorRequest{}, time.Time{}, errors.New("connector request frame: no end to its first line")
	}
	guards, params, ok := bytes.Cut(rest, []byte{'\n'})
	if !ok {
		return ConnectorRequest{}, time.Time{}, errors.New("connector request frame: no end to its guards line")
	}
	var f [5][]byte
	for i := range f {
		var more bool
		f[i], line, more = bytes.Cut(line, []byte{' '})
		if len(f[i]) == 0 || more != (i < len(f)-1) {
			return ConnectorRequest{}, time.Time{}, errors.New("connector request frame: want request, account, credential, deadline and key, separated by single spaces")
		}
	}
	nanos, err := strconv.ParseInt(string(f[3]), 10, 64)
	if err != nil || nanos < 0 {
		return ConnectorRequest{}, time.Time{}, fmt.Errorf("connector request frame: deadline %q is not Unix nanoseconds", f[3])
	}
	r := ConnectorRequest{RequestID: string(f[0]), Operation: op, AccountID: string(f[1]),
		Credential: CredentialInfo{ID: string(f[2])}, Params: params}
	if k := string(f[4]); k != "-" {
		r.KeyID = k
	}
	if len(guards) > 0 {
		r.Guards = new(Guards)
		if err := json.Unmarshal(guards, r.Guards); err != nil {
			return r, time.Time{}, fmt.Errorf("connector request frame: guards: %w", err)
		}
	}
	var deadline time.Time
	if nanos > 0 {
		deadline = time.Unix(0, nanos)
	}
	return r, deadline, nil
}
