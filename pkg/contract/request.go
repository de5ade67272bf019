package contract

import (
	"encoding/json"
	"sync"
	"unicode/utf8"
)

// ParseRequest reads a /v1 body (DESIGN §4 step 5): a JSON object with a
// known operation. It returns the operation and the remaining fields.
func ParseRequest(body []byte) (*Operation, map[string]json.RawMessage, *Error) {
	fields, ok := ObjectFields(body)
	if !ok {
		return nil, nil, Errorf(CodeInvalidJSON, "request body must be a JSON object")
	}
	raw, ok := fields["operation"]
	if !ok || string(raw) == "null" {
		return nil, nil, Errorf(CodeMissingOperation, "the body needs an \"operation\" field, e.g. \"getMarkPrice\"")
	}
	name, ok := JSONString(raw)
	if !ok {
		return nil, nil, Errorf(CodeInvalidRequest, "field \"operation\" must be a string")
	}
	if name == "" {
		return nil, nil, Errorf(CodeMissingOperation, "field \"operation\" is empty")
	}
	op, ok := Lookup(name)
	if !ok {
		if guess, ok := Suggest(name); ok {
			return nil, nil, Errorf(CodeUnknownOperation, "unknown operation %q; did you mean %q?", truncate(name), guess.Name)
		}
		return nil, nil, Errorf(CodeUnknownOperation, "unknown operation %q; operations are listed at GET /openapi.json", truncate(name))
	}
	delete(fields, "operation")
	return op, fields, nil
}

// ObjectFields splits a JSON object into its members, as json.Unmarshal
// into a map[string]json.RawMessage does (the last of repeated names
// wins), with the values as subslices of body rather than copies. ok is
// false unless body is exactly one JSON object. It runs on every request:
// the reflective decode it replaces made a third of the edge's JSON cost.
func ObjectFields(body []byte) (fields map[string]json.RawMessage, ok bool) {
	if !json.Valid(body) {
		return nil, false
	}
	// From here body is known to be valid JSON, so the scan below only
	// finds where each token ends.
	i := skipSpace(body, 0)
	if body[i] != '{' {
		return nil, false
	}
	fields = fieldMaps.Get().(map[string]json.RawMessage)
	i = skipSpace(body, i+1)
	if body[i] == '}' {
		return fields, true
	}
	for {
		end := stringEnd(body, i)
		key, ok := fieldNames()[string(body[i+1:end-1])] // a map lookup by string(bytes) does not copy
		if !ok {
			if key, ok = JSONString(body[i:end]); !ok {
				return nil, false // unreachable for valid JSON
			}
		}
		i = skipSpace(body, skipSpace(body, end)+1) // past the colon
		end = valueEnd(body, i)
		fields[key] = body[i:end:end]
		i = skipSpace(body, end)
		if body[i] == '}' {
			return fields, true
		}
		i = skipSpace(body, i+1) // past the comma
	}
}

// fieldMaps recycles the maps ObjectFields fills: one per request, and a
// map's first slots were the largest allocation of parsing a body.
var fieldMaps = sync.Pool{New: func() any { return make(map[string]json.RawMessage, 8) }}

// ReleaseFields gives back a map ParseRequest or ObjectFields returned,
// for a later request; the caller must not use it afterwards. Its values
// are slices of the body, which stays the caller's.
func ReleaseFields(fields map[string]json.RawMessage) {
	if fields != nil {
		clear(fields)
		fieldMaps.Put(fields)
	}
}

// JSONString decodes a JSON string literal as json.Unmarshal does; a
// literal without escapes or non-ASCII bytes, the usual case, is sliced
// rather than decoded.
func JSONString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	plain := true
	for _, c := range raw[1 : len(raw)-1] {
		if c < ' ' || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string literal starting at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// valueEnd is the index after the JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// fieldNames holds every field name a /v1 body may have, so that
// ObjectFields uses these strings rather than a copy per request.
var fieldNames = sync.OnceValue(func() map[string]string {
	names := map[string]string{"operation": "operation", "credentialId": "credentialId"}
	var add func(*StructSpec)
	add = func(s *StructSpec) {
		for i := range s.Fields {
			names[s.Fields[i].Name] = s.Fields[i].Name
			if s.Fields[i].Elem != nil {
				add(s.Fields[i].Elem)
			}
		}
	}
	for _, o := range Operations {
		add(SpecOf(o.Params))
	}
	return names
})
