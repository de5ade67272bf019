package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// referencePath is docs/api.md from this package's directory.
var referencePath = filepath.Join("..", "..", "docs", "api.md")

// TestReferenceUpToDate fails when docs/api.md drifts from the operation
// table; `make docs` rewrites it.
func TestReferenceUpToDate(t *testing.T) {
	got := Reference()
	if *update {
		if err := os.WriteFile(referencePath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/api.md is out of date with the operation table: run `make docs` and commit it")
	}
}

// TestExamplesDecode: every reference example is a valid request, and
// every operation has one.
func TestExamplesDecode(t *testing.T) {
	covered := map[string]bool{}
	for _, e := range Examples {
		op, ok := Lookup(e.Operation)
		if !ok {
			t.Fatalf("example of unknown operation %s", e.Operation)
		}
		covered[op.Name] = true
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(e.Body("0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11")), &fields); err != nil {
			t.Fatalf("%s example is not JSON: %v", e.Operation, err)
		}
		delete(fields, "operation")
		delete(fields, "credentialId")
		if _, ce := op.DecodeParams(fields); ce != nil {
			t.Errorf("%s example refused: %s", e.Operation, ce.Message)
		}
	}
	for _, op := range Operations {
		if !covered[op.Name] {
			t.Errorf("no example of %s", op.Name)
		}
	}
}
