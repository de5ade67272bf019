package standalone

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// documentation is the README, CONTRIBUTING and every file in docs/.
func documentation(t *testing.T) string {
	t.Helper()
	var all strings.Builder
	all.WriteString(readme(t))
	files, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	files = append(files, filepath.Join("..", "..", "CONTRIBUTING.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

// exampleObject finds a request example in a line of the docs: a JSON
// object starting with "operation", bare or quoted for the shell.
var exampleObject = regexp.MustCompile(`\{"operation":.*\}`)

// readmeExamples returns the request examples of the README and docs,
// with the placeholders they use ($CRED, $CID, $ORDER_ID, and shell-quoted
// '"$CRED"', '"$ORDER_ID"', '"$ORDER"') filled in.
func readmeExamples(t *testing.T) []map[string]any {
	t.Helper()
	const cred = "0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11"
	fill := strings.NewReplacer(
		// shell-quoted placeholders of the real-exchange section
		`'"$CRED"'`, cred, `'"$ORDER_ID"'`, "100000001",
		`'"$ORDER"'`, `"credentialId":"`+cred+`","market":"BTC","side":"BUY","size":"0.002","price":"50000","postOnly":true`,
		"$CRED", cred, "$CID", "cid-1", "$ORDER_ID", "100000001")
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(documentation(t)))
	for sc.Scan() {
		line := exampleObject.FindString(sc.Text())
		if line == "" {
			continue
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(fill.Replace(line)), &body); err != nil {
			t.Fatalf("request example is not JSON: %s", line)
		}
		out = append(out, body)
	}
	return out
}

// TestREADMEExamplesValidate checks every request example in the README
// against the tool's JSON Schema and against the edge's own decoder, and
// that the schema refuses the call without any one required field.
func TestREADMEExamplesValidate(t *testing.T) {
	covered := map[string]bool{}
	for _, body := range readmeExamples(t) {
		op, ok := contract.Lookup(body["operation"].(string))
		if !ok {
			t.Errorf("README example names unknown operation: %v", body["operation"])
			continue
		}
		covered[op.Name] = true
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
	for _, op := range contract.Operations {
		if !covered[op.Name] {
			t.Errorf("README has no request example of %s", op.Name)
		}
	}
}

func resolve(t *testing.T, op *contract.Operation) *jsonschema.Resolved {
	t.Helper()
	return resolveJSON(t, op.Name, op.InputSchema())
}

func resolveJSON(t *testing.T, name string, schema any) *jsonschema.Resolved {
	t.Helper()
	raw, _ := json.Marshal(schema)
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s schema does not parse: %v", name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s schema does not resolve: %v", name, err)
	}
	return rs
}

// TestREADMEListsEverything: every tool and every PERPGATE_* setting the
// code reads is documented.
func TestREADMEListsEverything(t *testing.T) {
	doc := documentation(t)
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

// TestOpenAPIServed: GET /openapi.json answers without a key with the
// checked-in document, which is the one generated from the operation table.
func TestOpenAPIServed(t *testing.T) {
	g := startGateway(t)
	resp, err := http.Get(g.URL() + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
		resp.Header.Get("X-Request-Id") == "" {
		t.Fatalf("GET /openapi.json without a key: %d %v", resp.StatusCode, resp.Header)
	}
	generated, err := contract.OpenAPI(contract.APIVersion)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, contract.OpenAPIDocument) || !bytes.Equal(body, generated) {
		t.Fatal("served document differs from the checked-in or the generated one")
	}
}

// openAPIDoc is the checked-in OpenAPI document with its references
// rewritten from components to $defs, so a JSON Schema validator can
// resolve a schema of it on its own.
type openAPIDoc struct {
	Paths struct {
		V1 struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Schema map[string]any `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
				Responses map[string]struct {
					Content map[string]struct {
						Schema map[string]any `json:"schema"`
					} `json:"content"`
				} `json:"responses"`
			} `json:"post"`
		} `json:"/v1"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]any `json:"schemas"`
	} `json:"components"`
}

func loadOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	text := strings.ReplaceAll(string(contract.OpenAPIDocument), `"#/components/schemas/`, `"#/$defs/`)
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// schema resolves s with the document's schemas as $defs.
func (d openAPIDoc) schema(t *testing.T, name string, s map[string]any) *jsonschema.Resolved {
	t.Helper()
	root := map[string]any{"$defs": d.Components.Schemas}
	for k, v := range s {
		root[k] = v
	}
	return resolveJSON(t, name, root)
}

// TestOpenAPIRequestUnion validates the README examples against the
// OpenAPI document's request body: each matches exactly one member of the
// union, the one its operation names; without a required field, or under
// another operation's name, it matches none.
func TestOpenAPIRequestUnion(t *testing.T) {
	doc := loadOpenAPI(t)
	schema := doc.schema(t, "request body", doc.Paths.V1.Post.RequestBody.Content["application/json"].Schema)

	for _, body := range readmeExamples(t) {
		name := body["operation"].(string)
		if err := schema.Validate(body); err != nil {
			t.Errorf("%s example fails the OpenAPI request body: %v", name, err)
		}
		other := map[string]any{}
		for k, v := range body {
			other[k] = v
		}
		other["operation"] = contract.OpPlaceLimitOrder
		if name == contract.OpPlaceLimitOrder {
			other["operation"] = contract.OpGetBalance
		}
		if schema.Validate(other) == nil {
			t.Errorf("%s example passes under operation %v", name, other["operation"])
		}
		op, _ := contract.Lookup(name)
		for _, req := range op.InputSchema()["required"].([]string) {
			partial := map[string]any{}
			for k, v := range body {
				if k != req {
					partial[k] = v
				}
			}
			if schema.Validate(partial) == nil {
				t.Errorf("%s example passes without %q", name, req)
			}
		}
	}
}

// TestOpenAPIDescribesResponses sends every README example to the paper
// exchange through POST /v1 and validates what comes back against the
// document: a success against the operation's response schema, an error
// against the schema documented for its status.
func TestOpenAPIDescribesResponses(t *testing.T) {
	doc := loadOpenAPI(t)
	g := startGateway(t)
	statuses := map[int]bool{}
	for _, body := range readmeExamples(t) {
		name := body["operation"].(string)
		body["credentialId"] = g.Bootstrap().CredentialID
		r := g.call(g.Bootstrap().APIKey, body)
		statuses[r.status] = true
		var schema *jsonschema.Resolved
		if r.status == http.StatusOK {
			ref := "#/$defs/" + strings.ToUpper(name[:1]) + name[1:] + "Response"
			schema = doc.schema(t, name+" response", map[string]any{"$ref": ref})
		} else {
			documented, ok := doc.Paths.V1.Post.Responses[strconv.Itoa(r.status)]
			if !ok {
				t.Errorf("%s answered %d, a status the document does not list: %s", name, r.status, r.raw)
				continue
			}
			schema = doc.schema(t, name+" error", documented.Content["application/json"].Schema)
		}
		if err := schema.Validate(r.body); err != nil {
			t.Errorf("%s: %d response does not match the document: %v\n%s", name, r.status, err, r.raw)
		}
	}
	if !statuses[http.StatusOK] {
		t.Fatal("no README example succeeded")
	}
	r := g.call(g.Bootstrap().APIKey, map[string]any{"operation": "getMarkPrice", "market": "BTC", "depth": 5})
	schema := doc.schema(t, "400", doc.Paths.V1.Post.Responses["400"].Content["application/json"].Schema)
	if r.status != 400 || schema.Validate(r.body) != nil {
		t.Errorf("a 400 does not match the document: %s", r.raw)
	}
	if schema.Validate(map[string]any{"success": false, "code": "RATE_LIMITED", "error": "x"}) == nil {
		t.Error("the 400 schema accepts a code of another status")
	}
}

// TestREADMEMCPSection: the MCP guide (docs/mcp.md) says how to connect a desktop
// client (config snippets that parse and point at /mcp with the key),
// mentions the SSE address, and lists every tool.
func TestREADMEMCPSection(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "mcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(b)
	for _, op := range contract.Operations {
		if !strings.Contains(section, "`"+op.Tool+"`") {
			t.Errorf("MCP section does not list tool %s", op.Tool)
		}
	}
	for _, want := range []string{"/mcp/sse?api_key=", "Builder", "TIER_INSUFFICIENT", "isError"} {
		if !strings.Contains(section, want) {
			t.Errorf("MCP section does not mention %s", want)
		}
	}
	snippets := 0
	for _, block := range strings.Split(section, "```json")[1:] {
		block = block[:strings.Index(block, "```")]
		var cfg struct {
			MCPServers map[string]map[string]any `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(block), &cfg); err != nil {
			t.Errorf("config snippet is not JSON: %v\n%s", err, block)
			continue
		}
		server, ok := cfg.MCPServers["perpgate"]
		raw, _ := json.Marshal(server)
		if !ok || !strings.Contains(string(raw), "/mcp") || !strings.Contains(string(raw), "Bearer mt_test_") {
			t.Errorf("config snippet does not point at /mcp with a key: %s", raw)
		}
		snippets++
	}
	if snippets == 0 {
		t.Error("MCP section has no client config snippet")
	}
}
