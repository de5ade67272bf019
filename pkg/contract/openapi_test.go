package contract

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
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
	if doc.OpenAPI != "3.1.0" || len(doc.Components.Schemas) != 2*len(Operations)+2 { // + Error and Event
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
			if op.ByExchange || op.Keyless {
				// credentialId or exchange, or none: not required.
				req = append([]string{"credentialId"}, req...)
			}
			if req[0] != "credentialId" || s["additionalProperties"] != false {
				t.Errorf("schema: required %v additionalProperties %v", req, s["additionalProperties"])
			}
		})
	}
}

// TestOpenAPIDocument checks the shape issue 3 asks for: the request body
// is a union over the 20 operations discriminated by `operation`, each
// operation has its success schema, and every error code POST /v1 can
// answer with is documented under its status with the error envelope.
func TestOpenAPIDocument(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(OpenAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	get := func(v any, path ...string) any {
		t.Helper()
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no %v in the document", path)
			}
			v = m[p]
		}
		return v
	}
	schemas := get(doc, "components", "schemas").(map[string]any)
	deref := func(v any) map[string]any {
		t.Helper()
		r, _ := get(v, "$ref").(string)
		name, ok := strings.CutPrefix(r, "#/components/schemas/")
		s, found := schemas[name].(map[string]any)
		if !ok || !found {
			t.Fatalf("reference %q does not resolve", r)
		}
		return s
	}
	post := get(doc, "paths", "/v1", "post")

	body := get(post, "requestBody", "content", "application/json", "schema")
	if get(body, "discriminator", "propertyName") != "operation" {
		t.Fatalf("request body is not discriminated by operation: %v", get(body, "discriminator"))
	}
	mapping := get(body, "discriminator", "mapping").(map[string]any)
	oneOf := get(body, "oneOf").([]any)
	if len(oneOf) != len(Operations) || len(mapping) != len(Operations) {
		t.Fatalf("request union has %d members and %d mappings, want %d", len(oneOf), len(mapping), len(Operations))
	}
	members := map[string]bool{}
	for _, m := range oneOf {
		members[get(m, "$ref").(string)] = true
	}
	for _, op := range Operations {
		target, ok := mapping[op.Name].(string)
		if !ok || !members[target] {
			t.Errorf("%s: mapping %q is not a member of the union", op.Name, target)
			continue
		}
		req := deref(map[string]any{"$ref": target})
		if get(req, "properties", "operation", "const") != op.Name || req["additionalProperties"] != false {
			t.Errorf("%s: request schema does not pin operation or is open: %v", op.Name, req["properties"])
		}
		required := map[string]bool{}
		for _, r := range req["required"].([]any) {
			required[r.(string)] = true
		}
		if !required["operation"] || required["credentialId"] == (op.ByExchange || op.Keyless) {
			t.Errorf("%s: operation and (unless it may name an exchange instead) credentialId are not required: %v", op.Name, req["required"])
		}
		if ext, _ := req["x-perpgate-extension"].(bool); ext != op.Extension {
			t.Errorf("%s: x-perpgate-extension %v, want %v", op.Name, ext, op.Extension)
		}
		for _, f := range SpecOf(op.Params).Fields {
			if f.Required != required[f.Name] {
				t.Errorf("%s: field %s required=%v in the schema, %v in the table", op.Name, f.Name, required[f.Name], f.Required)
			}
		}
	}

	responses := get(post, "responses").(map[string]any)
	ok, _ := get(responses["200"], "content", "application/json", "schema", "anyOf").([]any)
	if len(ok) != len(Operations) {
		t.Errorf("200 response has %d shapes, want %d", len(ok), len(Operations))
	}
	for _, r := range ok {
		shapes := []any{deref(r)}
		if branches, isUnion := deref(r)["anyOf"].([]any); isUnion { // a placement or its dry run
			shapes = branches
		}
		for _, s := range shapes {
			if get(s, "properties", "success", "const") != true {
				t.Errorf("success schema %v lacks success:true", s)
			}
		}
	}
	envelope := schemas["Error"]
	for _, f := range []string{"success", "code", "error", "reason", "exchangeCode", "exchangeMessage", "retryAfter"} {
		if get(envelope, "properties", f) == nil {
			t.Errorf("error envelope lacks %s", f)
		}
	}
	documented := map[Code]bool{}
	for status, r := range responses {
		if status == "200" {
			continue
		}
		all := get(r, "content", "application/json", "schema", "allOf").([]any)
		if deref(all[0])["properties"] == nil {
			t.Errorf("%s: not the error envelope", status)
		}
		for _, c := range get(all[1], "properties", "code", "enum").([]any) {
			code := Code(c.(string))
			documented[code] = true
			if strconv.Itoa(code.Status()) != status {
				t.Errorf("%s is documented under %s but answers %d", code, status, code.Status())
			}
		}
		if get(r, "headers", "X-Request-Id") == nil {
			t.Errorf("%s: X-Request-Id not documented", status)
		}
	}
	for _, c := range V1Codes() {
		if !documented[c] {
			t.Errorf("code %s (%d) is not documented", c, c.Status())
		}
	}
	for _, c := range []Code{CodeMissingAPIKey, CodeTierInsufficient, CodeRateLimited, CodeExchangeError, CodeInvalidRequest} {
		if !documented[c] {
			t.Errorf("SPEC §7 code %s is not documented", c)
		}
	}
	if get(responses["429"], "headers", "Retry-After") == nil {
		t.Error("429 does not document Retry-After")
	}
	if sec, ok := get(doc, "paths", "/openapi.json", "get", "security").([]any); !ok || len(sec) != 0 {
		t.Errorf("GET /openapi.json should need no key: security %v", sec)
	}
}

// TestOpenAPILint holds the document to the rules of Redocly's
// "recommended" ruleset that the README names (checked once with
// `redocly lint --extends=recommended`; this keeps them without npm):
// servers, license, operation ids, summaries, 2xx and 4xx responses,
// security, no unused components, and client-facing error codes only.
func TestOpenAPILint(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(OpenAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	get := func(v any, path ...string) any {
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		return v
	}
	servers, _ := doc["servers"].([]any)
	if len(servers) == 0 {
		t.Error("no servers (no-empty-servers)")
	}
	for _, s := range servers {
		u, _ := s.(map[string]any)["url"].(string)
		if u == "" || strings.Contains(u, "example.com") || strings.HasSuffix(u, "/") {
			t.Errorf("server url %q (no-server-example.com, no-server-trailing-slash)", u)
		}
	}
	lic, _ := get(doc, "info", "license").(map[string]any)
	if lic["name"] == nil || (lic["identifier"] == nil && lic["url"] == nil) {
		t.Errorf("info.license = %v (info-license, info-license-strict)", lic)
	}
	ids := map[string]bool{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			op := o.(map[string]any)
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] {
				t.Errorf("%s %s: operationId %q missing or repeated", method, path, id)
			}
			ids[id] = true
			if op["summary"] == nil {
				t.Errorf("%s %s: no summary", method, path)
			}
			var ok2, ok4 bool
			for status := range op["responses"].(map[string]any) {
				ok2 = ok2 || strings.HasPrefix(status, "2")
				ok4 = ok4 || strings.HasPrefix(status, "4")
			}
			if !ok2 || !ok4 {
				t.Errorf("%s %s: needs a 2xx and a 4xx response", method, path)
			}
			if _, own := op["security"]; !own && doc["security"] == nil {
				t.Errorf("%s %s: no security (security-defined)", method, path)
			}
		}
	}
	whole := string(OpenAPIDocument)
	for name := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		if !strings.Contains(whole, `"#/components/schemas/`+name+`"`) {
			t.Errorf("schema %s is never referenced (no-unused-components)", name)
		}
	}
	var codes []string
	for _, c := range get(doc, "components", "schemas", "Error", "properties", "code", "enum").([]any) {
		codes = append(codes, c.(string))
	}
	var want []string
	for _, c := range V1Codes() {
		want = append(want, string(c))
	}
	if !slices.Equal(codes, want) {
		t.Errorf("Error.code enum = %v, want the /v1 codes %v", codes, want)
	}
	for _, admin := range []Code{CodeAdminUnauthorized, CodeKeyLimitReached, CodeAccountNotFound, CodeAPIKeyNotFound} {
		if slices.Contains(codes, string(admin)) {
			t.Errorf("the admin API's %s is in the /v1 error schema", admin)
		}
	}
}
