package contract

import "encoding/json"

// ParseRequest reads a /v1 body (DESIGN §4 step 5): a JSON object with a
// known operation. It returns the operation and the remaining fields.
func ParseRequest(body []byte) (*Operation, map[string]json.RawMessage, *Error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, nil, Errorf(CodeInvalidJSON, "request body must be a JSON object")
	}
	raw, ok := fields["operation"]
	if !ok || string(raw) == "null" {
		return nil, nil, Errorf(CodeMissingOperation, "the body needs an \"operation\" field, e.g. \"getMarkPrice\"")
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
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
