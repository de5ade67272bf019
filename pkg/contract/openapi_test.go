package contract

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite openapi.json from the operation table")

// TestOpenAPIUpToDate fails when the checked-in openapi.json drifts from the
// operation table; `go test ./pkg/contract -run OpenAPI -update` rewrites it.
func TestOpenAPIUpToDate(t *testing.T) {
	got, err := OpenAPI(APIVersion)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, OpenAPIDocument) {
		t.Fatal("openapi.json is out of date with the operation table: run `make openapi` and commit it")
	}
	var doc struct {
		OpenAPI    string `json:"openapi"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || len(doc.Components.Schemas) != 2*len(Operations)+1 {
		t.Fatalf("openapi %s with %d schemas", doc.OpenAPI, len(doc.Components.Schemas))
	}
}

func TestInputSchemaMatchesDecoder(t *testing.T) {
	for _, op := range Operations {
		t.Run(op.Name, func(t *testing.T) {
			s := op.InputSchema()
			props := s["properties"].(map[string]any)
			for _, f := range SpecOf(op.Params).Fields {
				if _, ok := props[f.Name]; !ok {
					t.Errorf("schema lacks field %s", f.Name)
				}
			}
			req := s["required"].([]string)
			if req[0] != "credentialId" || s["additionalProperties"] != false {
				t.Errorf("schema: required %v additionalProperties %v", req, s["additionalProperties"])
			}
		})
	}
}
