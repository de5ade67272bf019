package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/perpgate/perpgate/pkg/symbol"
	"github.com/shopspring/decimal"
)

// Bounds on wire values, so no input can make the gateway do unbounded work.
const (
	maxStringLen  = 128
	maxDecimalLen = 40
)

var (
	plainDecimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	clientIDChar = regexp.MustCompile(`^[A-Za-z0-9_-]{1,36}$`)
	decimalType  = reflect.TypeFor[decimal.Decimal]()
)

type fieldKind int

const (
	kindString fieldKind = iota
	kindDecimal
	kindInt
	kindBool
	kindSlice
	kindObject // a pointer to a struct: an optional nested object
)

// FieldSpec describes one parameter field, parsed from its `op` tag.
type FieldSpec struct {
	Name        string
	Description string
	Required    bool
	Enum        []string
	Min, Max    *int
	Positive    bool
	Number      bool // decimal that may arrive as a JSON number
	Market      bool
	ClientID    bool
	MaxLen      int
	Default     string
	HasDefault  bool
	Elem        *StructSpec // for slices of structs and nested objects
	kind        fieldKind
	index       int
}

// StructSpec is the validated shape of a parameter struct.
type StructSpec struct {
	Fields []FieldSpec
	byName map[string]*FieldSpec
}

// Kind returns the JSON Schema type of the field.
func (f *FieldSpec) Kind() string {
	switch f.kind {
	case kindDecimal:
		return "decimal"
	case kindInt:
		return "integer"
	case kindBool:
		return "boolean"
	case kindSlice:
		return "array"
	case kindObject:
		return "object"
	}
	return "string"
}

var specs sync.Map // reflect.Type -> *StructSpec

// SpecOf returns the field specs of a parameter struct type.
func SpecOf(t reflect.Type) *StructSpec {
	if s, ok := specs.Load(t); ok {
		return s.(*StructSpec)
	}
	s := buildSpec(t)
	specs.Store(t, s)
	return s
}

func buildSpec(t reflect.Type) *StructSpec {
	s := &StructSpec{byName: map[string]*FieldSpec{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		f := FieldSpec{Name: name, Description: sf.Tag.Get("desc"), index: i, MaxLen: maxStringLen}
		switch {
		case sf.Type == decimalType:
			f.kind = kindDecimal
		case sf.Type.Kind() == reflect.Int:
			f.kind = kindInt
		case sf.Type.Kind() == reflect.Bool:
			f.kind = kindBool
		case sf.Type.Kind() == reflect.Slice:
			f.kind = kindSlice
			f.Elem = SpecOf(sf.Type.Elem())
		case sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.Struct:
			f.kind = kindObject
			f.Elem = SpecOf(sf.Type.Elem())
		}
		for _, rule := range strings.Split(sf.Tag.Get("op"), ",") {
			k, v, _ := strings.Cut(rule, "=")
			switch k {
			case "required":
				f.Required = true
			case "enum":
				f.Enum = strings.Split(v, "|")
			case "min":
				n, _ := strconv.Atoi(v)
				f.Min = &n
			case "max":
				n, _ := strconv.Atoi(v)
				f.Max = &n
			case "positive":
				f.Positive = true
			case "number":
				f.Number = true
			case "market":
				f.Market = true
			case "clientid":
				f.ClientID = true
			case "maxlen":
				f.MaxLen, _ = strconv.Atoi(v)
			case "default":
				f.Default, f.HasDefault = v, true
			}
		}
		s.Fields = append(s.Fields, f)
	}
	for i := range s.Fields {
		s.byName[s.Fields[i].Name] = &s.Fields[i]
	}
	return s
}

// Validator is implemented by parameter structs with cross-field rules.
type Validator interface {
	Validate() *Error
}

// DecodeParams validates the operation's parameters (the request's top-level
// fields other than operation and credentialId) and returns a pointer to the
// filled parameter struct. Every failure is INVALID_REQUEST naming the field.
func (o *Operation) DecodeParams(fields map[string]json.RawMessage) (any, *Error) {
	v := reflect.New(o.Params)
	if err := decodeStruct(SpecOf(o.Params), fields, v.Elem(), "", o.Name); err != nil {
		return nil, err
	}
	if val, ok := v.Interface().(Validator); ok {
		if err := val.Validate(); err != nil {
			return nil, err
		}
	}
	return v.Interface(), nil
}

func invalid(format string, args ...any) *Error {
	return Errorf(CodeInvalidRequest, format, args...)
}

func decodeStruct(s *StructSpec, fields map[string]json.RawMessage, dst reflect.Value, path, opName string) *Error {
	unknown := make([]string, 0)
	for name := range fields {
		if _, ok := s.byName[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		allowed := make([]string, 0, len(s.Fields))
		for _, f := range s.Fields {
			allowed = append(allowed, f.Name)
		}
		where := "operation " + opName
		if path != "" {
			where = path
		}
		if len(allowed) == 0 {
			return invalid("unknown field %q for %s: it takes no parameters besides credentialId", path+unknown[0], where)
		}
		return invalid("unknown field %q for %s; allowed fields: %s", path+unknown[0], where, strings.Join(allowed, ", "))
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		raw, present := fields[f.Name]
		if present && bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			present = false
		}
		if !present {
			if f.Required {
				return invalid("missing required field %q", path+f.Name)
			}
			if !f.HasDefault {
				continue
			}
			raw = defaultJSON(f)
		}
		if err := decodeField(f, raw, dst.Field(f.index), path+f.Name, opName); err != nil {
			return err
		}
	}
	return nil
}

func defaultJSON(f *FieldSpec) json.RawMessage {
	if f.kind == kindString {
		b, _ := json.Marshal(f.Default)
		return b
	}
	return json.RawMessage(f.Default)
}

func decodeField(f *FieldSpec, raw json.RawMessage, dst reflect.Value, name, opName string) *Error {
	raw = bytes.TrimSpace(raw)
	switch f.kind {
	case kindString:
		s, ok := JSONString(raw)
		if !ok {
			return invalid("field %q must be a string", name)
		}
		if err := checkString(f, s, name); err != nil {
			return err
		}
		dst.SetString(s)
	case kindDecimal:
		d, err := parseDecimal(f, raw, name)
		if err != nil {
			return err
		}
		dst.Set(reflect.ValueOf(d))
	case kindInt:
		n, err := parseInt(f, raw, name)
		if err != nil {
			return err
		}
		dst.SetInt(int64(n))
	case kindBool:
		switch string(raw) {
		case "true":
			dst.SetBool(true)
		case "false":
			dst.SetBool(false)
		default:
			return invalid("field %q must be true or false", name)
		}
	case kindSlice:
		var items []json.RawMessage
		if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
			return invalid("field %q must be an array", name)
		}
		if f.Min != nil && len(items) < *f.Min {
			return invalid("field %q needs at least %d items", name, *f.Min)
		}
		if f.Max != nil && len(items) > *f.Max {
			return invalid("field %q takes at most %d items, got %d", name, *f.Max, len(items))
		}
		out := reflect.MakeSlice(dst.Type(), len(items), len(items))
		for i, item := range items {
			var obj map[string]json.RawMessage
			item = bytes.TrimSpace(item)
			if len(item) == 0 || item[0] != '{' || json.Unmarshal(item, &obj) != nil {
				return invalid("%s[%d] must be an object", name, i)
			}
			if err := decodeStruct(f.Elem, obj, out.Index(i), fmt.Sprintf("%s[%d].", name, i), opName); err != nil {
				return err
			}
		}
		dst.Set(out)
	case kindObject:
		var obj map[string]json.RawMessage
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
			return invalid("field %q must be an object", name)
		}
		out := reflect.New(dst.Type().Elem())
		if err := decodeStruct(f.Elem, obj, out.Elem(), name+".", opName); err != nil {
			return err
		}
		dst.Set(out)
	}
	return nil
}

func checkString(f *FieldSpec, s, name string) *Error {
	if len(f.Enum) > 0 {
		for _, e := range f.Enum {
			if s == e {
				return nil
			}
		}
		return invalid("field %q must be one of %s, got %q", name, strings.Join(f.Enum, ", "), truncate(s))
	}
	if len(s) > f.MaxLen {
		return invalid("field %q is longer than %d characters", name, f.MaxLen)
	}
	if f.Required && strings.TrimSpace(s) == "" {
		return invalid("field %q must not be empty", name)
	}
	if f.Market && s != "" {
		if _, err := symbol.Parse(s); err != nil {
			return invalid("field %q: %v", name, err)
		}
	}
	if f.ClientID && s != "" && !clientIDChar.MatchString(s) {
		return invalid("field %q must be 1-36 characters of letters, digits, '-' or '_'", name)
	}
	return nil
}

func parseDecimal(f *FieldSpec, raw json.RawMessage, name string) (decimal.Decimal, *Error) {
	var s string
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if json.Unmarshal(raw, &s) != nil {
			return decimal.Decimal{}, invalid("field %q must be a decimal string such as \"0.01\"", name)
		}
	case f.Number && len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')):
		s = string(raw)
	default:
		if f.Number {
			return decimal.Decimal{}, invalid("field %q must be a number such as 5 or \"2.5\"", name)
		}
		return decimal.Decimal{}, invalid("field %q must be a decimal string such as \"0.01\" (numbers are sent as strings)", name)
	}
	if len(s) > maxDecimalLen || !plainDecimal.MatchString(s) {
		return decimal.Decimal{}, invalid("field %q must be a plain decimal of at most %d characters (digits and one '.', no exponent), got %q", name, maxDecimalLen, truncate(s))
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, invalid("field %q is not a decimal", name)
	}
	if f.Positive && !d.IsPositive() {
		return decimal.Decimal{}, invalid("field %q must be greater than zero", name)
	}
	return d, nil
}

func parseInt(f *FieldSpec, raw json.RawMessage, name string) (int, *Error) {
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return 0, invalid("field %q must be a whole number", name)
	}
	if f.Min != nil && n < *f.Min {
		return 0, invalid("field %q must be at least %d, got %d", name, *f.Min, n)
	}
	if f.Max != nil && n > *f.Max {
		return 0, invalid("field %q must be at most %d, got %d", name, *f.Max, n)
	}
	return n, nil
}

func truncate(s string) string {
	if len(s) > 24 {
		return s[:24] + "..."
	}
	return s
}

// Validate checks that at least one leg is asked for and that the stop
// stays on the right side of zero.
func (p *ProtectionParams) Validate() *Error {
	if p.TPPercent.IsZero() && p.SLPercent.IsZero() {
		return invalid("give tpPercent, slPercent or both")
	}
	if p.Side == Long && p.SLPercent.GreaterThanOrEqual(decimal.NewFromInt(100)) {
		return invalid("field \"slPercent\" must be below 100 for a LONG position")
	}
	if p.Side == Short && p.TPPercent.GreaterThanOrEqual(decimal.NewFromInt(100)) {
		return invalid("field \"tpPercent\" must be below 100 for a SHORT position: its take-profit lies below the entry price")
	}
	return nil
}
