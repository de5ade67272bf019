package contract

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MCP clients validate tool schemas with the draft their SDK knows: the
// TypeScript SDK uses draft-07, the Go SDK 2020-12. Every schema must mean
// the same under both, so each is compiled and run under each draft.
var drafts = map[string]*jsonschema.Draft{"draft-07": jsonschema.Draft7, "2020-12": jsonschema.Draft2020}

func compileAs(t *testing.T, draft *jsonschema.Draft, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	doc := decodeForSchema(t, schema)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(draft)
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

func decodeForSchema(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func instance(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// draftOnlyKeywords are keywords whose meaning differs between the drafts.
var draftOnlyKeywords = []string{"prefixItems", "$defs", "dependentRequired", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef"}

func walkSchema(t *testing.T, where string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for _, k := range draftOnlyKeywords {
			if _, ok := x[k]; ok {
				t.Errorf("%s uses %s, which draft-07 does not know", where, k)
			}
		}
		if items, ok := x["items"]; ok {
			if _, isBool := items.(bool); isBool {
				t.Errorf("%s has items:%v, which draft-07 reads differently after prefixItems", where, items)
			}
			if _, isList := items.([]any); isList {
				t.Errorf("%s has an items array, which 2020-12 does not know", where)
			}
		}
		for k, c := range x {
			walkSchema(t, where+"."+k, c)
		}
	case []any:
		for _, c := range x {
			walkSchema(t, where, c)
		}
	}
}

func TestSchemasMeanTheSameUnderBothDrafts(t *testing.T) {
	for _, op := range Operations {
		walkSchema(t, op.Name+" input", decodeForSchema(t, op.InputSchema()))
		walkSchema(t, op.Name+" output", decodeForSchema(t, op.OutputSchema()))
	}
	cred := "0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11"
	for name, draft := range drafts {
		t.Run(name, func(t *testing.T) {
			for _, e := range Examples {
				op, _ := Lookup(e.Operation)
				var body map[string]any
				_ = json.Unmarshal([]byte(e.Body(cred)), &body)
				delete(body, "operation")
				if err := compileAs(t, draft, op.InputSchema()).Validate(decodeForSchema(t, body)); err != nil {
					t.Errorf("%s example fails its input schema: %v", op.Name, err)
				}
			}
			book, _ := Lookup(OpGetOrderbook)
			out := compileAs(t, draft, book.OutputSchema())
			for inst, valid := range map[string]bool{
				`{"bids":[["100.5","2"],["100","0.1"]],"asks":[]}`: true,
				`{"bids":[["100.5"]],"asks":[]}`:                   false,
				`{"bids":[["100.5","2","3"]],"asks":[]}`:           false,
				`{"bids":[[100.5,"2"]],"asks":[]}`:                 false,
			} {
				if err := out.Validate(instance(t, inst)); (err == nil) != valid {
					t.Errorf("orderbook %s: valid=%v, want %v (%v)", inst, err == nil, valid, err)
				}
			}
			prot, _ := Lookup(OpPlaceProtectionOrders)
			in := compileAs(t, draft, prot.InputSchema())
			base := `"credentialId":"` + cred + `","market":"BTC","side":"LONG","size":"1","entryPrice":"100"`
			for inst, valid := range map[string]bool{
				`{` + base + `,"tpPercent":5,"slPercent":2.5}`: true,
				`{` + base + `,"tpPercent":"5"}`:               false, // a percentage is a number
				`{` + base + `,"tpPercent":0}`:                 false,
			} {
				if err := in.Validate(instance(t, inst)); (err == nil) != valid {
					t.Errorf("protection %s: valid=%v, want %v (%v)", inst, err == nil, valid, err)
				}
			}
		})
	}
}
