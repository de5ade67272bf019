package contract

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// JSON Schemas (draft 2020-12, as MCP and OpenAPI 3.1 use) generated from
// the operation table: the input schema of each tool and request, and the
// output schema of each result. They describe exactly what DecodeParams
// accepts, so an agent reading them sends valid requests.

// Patterns of wire strings. decimalPattern is what the decoder accepts
// (plainDecimal); positivePattern is the subset greater than zero, so a
// schema validator refuses "0", "0.0" and "-1" as the decoder does.
const (
	decimalPattern  = `^-?[0-9]+(\.[0-9]+)?$`
	positivePattern = `^([0-9]*[1-9][0-9]*(\.[0-9]+)?|[0-9]+\.[0-9]*[1-9][0-9]*)$`
	uuidPattern     = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
)

// InputSchema is the JSON Schema of an operation's parameters, including
// credentialId.
func (o *Operation) InputSchema() map[string]any {
	s := objectSchema(SpecOf(o.Params))
	if o.Keyless {
		return s
	}
	props := s["properties"].(map[string]any)
	props["credentialId"] = map[string]any{
		"type": "string", "format": "uuid", "pattern": uuidPattern,
		"description": "UUID of the exchange credential to act with; its exchange and network (mainnet or testnet) decide where the call goes.",
	}
	if o.ByExchange {
		s["description"] = "Give credentialId or exchange, not both."
		return s
	}
	s["required"] = append([]string{"credentialId"}, s["required"].([]string)...)
	return s
}

// OutputSchema is the JSON Schema of an operation's result fields.
func (o *Operation) OutputSchema() map[string]any {
	s := typeSchema(o.Result)
	if dr := dryRunResult(o); dr != nil {
		return map[string]any{"type": "object", "anyOf": []any{s, typeSchema(dr)},
			"description": "The placement's result, or with dryRun: true what would have been sent."}
	}
	return s
}

// dryRunResult is the result type of a placement with dryRun: true.
func dryRunResult(o *Operation) reflect.Type {
	switch o.Name {
	case OpPlaceLimitOrder, OpPlaceMarketOrder, OpPlaceStopOrder, OpModifyOrder:
		return reflect.TypeFor[DryRunResult]()
	case OpPlaceBatchOrder:
		return reflect.TypeFor[DryRunBatchResult]()
	case OpPlaceProtectionOrders:
		return reflect.TypeFor[DryRunProtectionResult]()
	}
	return nil
}

func objectSchema(s *StructSpec) map[string]any {
	props := map[string]any{}
	required := []string{}
	for i := range s.Fields {
		f := &s.Fields[i]
		props[f.Name] = fieldSchema(f)
		if f.Required {
			required = append(required, f.Name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func fieldSchema(f *FieldSpec) map[string]any {
	s := map[string]any{}
	if f.Description != "" {
		s["description"] = f.Description
	}
	switch f.kind {
	case kindString:
		s["type"] = "string"
		switch {
		case len(f.Enum) > 0:
			s["enum"] = f.Enum
		case f.Market:
			s["minLength"], s["maxLength"] = 1, 40
			s["examples"] = []string{"BTC-USD-PERP", "ETH", "BTCUSDT"}
		case f.ClientID:
			s["pattern"] = `^[A-Za-z0-9_-]{1,36}$`
		default:
			s["maxLength"] = f.MaxLen
			if f.Required {
				s["minLength"] = 1
			}
		}
	case kindDecimal:
		if f.Number { // a percentage, not money: a JSON number (SPEC §4)
			s["type"] = "number"
			if f.Positive {
				s["exclusiveMinimum"] = 0
				s["description"] = strings.TrimSpace(f.Description + " Must be greater than zero.")
			}
			break
		}
		s["type"] = "string"
		s["pattern"] = decimalPattern
		s["maxLength"] = maxDecimalLen
		if f.Positive {
			s["pattern"] = positivePattern
			s["description"] = strings.TrimSpace(f.Description + " Must be greater than zero.")
		}
	case kindInt:
		s["type"] = "integer"
		if f.Min != nil {
			s["minimum"] = *f.Min
		}
		if f.Max != nil {
			s["maximum"] = *f.Max
		}
	case kindBool:
		s["type"] = "boolean"
	case kindObject:
		for k, v := range objectSchema(f.Elem) {
			s[k] = v
		}
	case kindSlice:
		s["type"] = "array"
		s["items"] = objectSchema(f.Elem)
		if f.Min != nil {
			s["minItems"] = *f.Min
		}
		if f.Max != nil {
			s["maxItems"] = *f.Max
		}
	}
	if f.HasDefault {
		s["default"] = defaultValue(f)
	}
	return s
}

func defaultValue(f *FieldSpec) any {
	switch f.kind {
	case kindInt:
		n, _ := strconv.Atoi(f.Default)
		return n
	case kindBool:
		return f.Default == "true"
	}
	return f.Default
}

var (
	levelType        = reflect.TypeFor[Level]()
	errorType        = reflect.TypeFor[Error]()
	sideType         = reflect.TypeFor[Side]()
	positionSideType = reflect.TypeFor[PositionSide]()
	exchangeType     = reflect.TypeFor[Exchange]()
	supportType      = reflect.TypeFor[Support]()
	rawType          = reflect.TypeFor[json.RawMessage]()
)

// typeSchema describes how a result type marshals.
func typeSchema(t reflect.Type) map[string]any {
	switch {
	case t == decimalType:
		return map[string]any{"type": "string", "pattern": decimalPattern}
	case t == levelType:
		// Both members are decimal strings, so a two-item array of them says
		// the same under draft-07 and 2020-12 (prefixItems is 2020-12 only,
		// and draft-07 validators read items:false as "no items").
		dec := map[string]any{"type": "string", "pattern": decimalPattern}
		return map[string]any{"type": "array", "items": dec, "minItems": 2, "maxItems": 2,
			"description": "[price in quote currency, size in base-asset units]"}
	case t == errorType:
		return errorFields()
	case t == rawType: // an event's data: its shape depends on the type
		return map[string]any{"type": "object"}
	case t == sideType:
		return map[string]any{"type": "string", "enum": []string{string(Buy), string(Sell)}}
	case t == positionSideType:
		return map[string]any{"type": "string", "enum": []string{string(Long), string(Short)}}
	case t == supportType:
		return map[string]any{"type": "string", "enum": []string{string(Native), string(Emulated), string(Unsupported)}}
	case t == exchangeType:
		xs := make([]string, 0, len(Exchanges))
		for _, x := range Exchanges {
			xs = append(xs, string(x))
		}
		return map[string]any{"type": "string", "enum": xs}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeSchema(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		required := []string{}
		for i := range t.NumField() {
			sf := t.Field(i)
			name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if sf.Anonymous && name == "" { // embedded: its fields are this object's
				inner := typeSchema(sf.Type)
				for k, v := range inner["properties"].(map[string]any) {
					if _, ok := props[k]; !ok {
						props[k] = v
					}
				}
				if sf.Type.Kind() != reflect.Pointer { // a nil pointer leaves its fields out
					required = append(required, inner["required"].([]string)...)
				}
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			fs := typeSchema(sf.Type)
			if sf.Name == "CreatedAt" || sf.Name == "Timestamp" || sf.Name == "Time" || sf.Name == "NextFundingTime" {
				fs["description"] = "Unix time in seconds"
			}
			if sf.Name == "AsOf" {
				fs["description"] = "Unix time in milliseconds when the data was last known current (venue answer, or the stream's last message or heartbeat)"
			}
			props[name] = fs
			if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
				required = append(required, name)
			}
		}
		return map[string]any{"type": "object", "properties": props, "required": required}
	}
	return map[string]any{}
}

// ErrorSchema is the schema of the error envelope: success:false plus the
// fields of Error.
func ErrorSchema() map[string]any {
	s := errorFields()
	s["properties"].(map[string]any)["success"] = map[string]any{"const": false}
	s["required"] = append([]string{"success"}, s["required"].([]string)...)
	return s
}

// errorFields is the schema of an Error as it marshals on its own, as in
// a rejected order of a batch.
func errorFields() map[string]any {
	codes := make([]string, 0, len(codeStatus))
	for _, c := range V1Codes() { // the admin API's codes are not the clients'
		codes = append(codes, string(c))
	}
	reasons := []string{string(ReasonInsufficientMargin), string(ReasonInvalidOrder), string(ReasonPostOnlyRejected),
		string(ReasonOrderNotFound), string(ReasonAuthenticationFailed), string(ReasonPermissionDenied),
		string(ReasonUpstreamRateLimited), string(ReasonUpstreamUnavailable), string(ReasonUnknown)}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"code":            map[string]any{"type": "string", "enum": codes},
			"error":           map[string]any{"type": "string", "description": "What went wrong and what to fix."},
			"reason":          map[string]any{"type": "string", "enum": reasons, "description": "With EXCHANGE_ERROR: the kind of upstream failure."},
			"exchangeCode":    map[string]any{"type": "string", "description": "With EXCHANGE_ERROR: the exchange's own error code."},
			"exchangeMessage": map[string]any{"type": "string", "description": "With EXCHANGE_ERROR: the exchange's own message."},
			"retryAfter":      map[string]any{"type": "integer", "description": "Seconds to wait (RATE_LIMITED, UPSTREAM_RATE_LIMITED)."},
		},
		"required": []string{"code", "error"},
	}
}
