package standalone

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/perpgate/perpgate/pkg/contract"
)

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADMEExamplesValidate checks every request example in the README
// against the tool's JSON Schema and against the edge's own decoder, and
// that a call missing a required field is refused by both.
func TestREADMEExamplesValidate(t *testing.T) {
	examples := 0
	sc := bufio.NewScanner(strings.NewReader(readme(t)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, `{"operation":`) {
			continue
		}
		examples++
		var body map[string]any
		if err := json.Unmarshal([]byte(line), &body); err != nil {
			t.Errorf("README example is not JSON: %s", line)
			continue
		}
		op, ok := contract.Lookup(body["operation"].(string))
		if !ok {
			t.Errorf("README example names unknown operation: %s", line)
			continue
		}
		delete(body, "operation")
		schema := resolve(t, op)
		if err := schema.Validate(body); err != nil {
			t.Errorf("%s example fails its schema: %v", op.Name, err)
		}
		fields := map[string]json.RawMessage{}
		for k, v := range body {
			fields[k], _ = json.Marshal(v)
		}
		delete(fields, "credentialId")
		if _, ce := op.DecodeParams(fields); ce != nil {
			t.Errorf("%s example refused by the decoder: %s", op.Name, ce.Message)
		}
		for _, req := range schema.Schema().Required {
			partial := map[string]any{}
			for k, v := range body {
				if k != req {
					partial[k] = v
				}
			}
			if schema.Validate(partial) == nil {
				t.Errorf("%s schema accepts a call without %q", op.Name, req)
			}
		}
	}
	if examples < len(contract.Operations) {
		t.Errorf("README shows %d request examples; want one per operation (%d)", examples, len(contract.Operations))
	}
}

func resolve(t *testing.T, op *contract.Operation) *jsonschema.Resolved {
	t.Helper()
	raw, _ := json.Marshal(op.InputSchema())
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s schema does not parse: %v", op.Name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s schema does not resolve: %v", op.Name, err)
	}
	return rs
}

// TestREADMEListsEverything: every tool and every PERPGATE_* setting the
// code reads is documented.
func TestREADMEListsEverything(t *testing.T) {
	doc := readme(t)
	for _, op := range contract.Operations {
		if !strings.Contains(doc, "`"+op.Tool+"`") {
			t.Errorf("README does not list tool %s", op.Tool)
		}
	}
	out, err := exec.Command("git", "-C", filepath.Join("..", ".."), "grep", "-hoE", `"PERPGATE_[A-Z_]+"`, "--", "*.go", ":!*_test.go").Output()
	if err != nil {
		t.Skipf("git grep unavailable: %v", err)
	}
	name := regexp.MustCompile(`PERPGATE_[A-Z_]*[A-Z]`)
	for _, v := range name.FindAllString(string(out), -1) {
		if !strings.Contains(doc, v) {
			t.Errorf("README does not document %s", v)
		}
	}
}
