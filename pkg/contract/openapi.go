package contract

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// OpenAPI returns the OpenAPI 3.1 document of POST /v1, generated from the
// operation table: the request body is a union discriminated by
// `operation`, each operation has its response schema, and every error
// status shares the error envelope. version is the API version string.
func OpenAPI(version string) ([]byte, error) {
	schemas := map[string]any{"Error": ErrorSchema()}
	var requests, responses []any
	mapping := map[string]any{}
	for _, op := range Operations {
		name := strings.ToUpper(op.Name[:1]) + op.Name[1:]
		req := op.InputSchema()
		props := req["properties"].(map[string]any)
		props["operation"] = map[string]any{"const": op.Name}
		req["required"] = append([]string{"operation"}, req["required"].([]string)...)
		req["description"] = op.Summary + " Minimum tier: " + string(op.MinTier) + "."
		if op.Extension {
			req["x-perpgate-extension"] = true
			req["description"] = "Extension operation (beyond the 20 of the contract). " + req["description"].(string)
		}
		schemas[name+"Request"] = req
		schemas[name+"Response"] = withSuccess(op.OutputSchema())
		requests = append(requests, ref(name+"Request"))
		responses = append(responses, ref(name+"Response"))
		mapping[op.Name] = "#/components/schemas/" + name + "Request"
	}
	// A success body does not name its operation, and the smaller results
	// are subsets of larger ones, so the 200 shapes are anyOf: the body is
	// the <Operation>Response of the operation sent.
	responses200 := map[string]any{"description": "Success: `success:true` plus the fields of the <Operation>Response schema of the operation sent.",
		"headers": headers(http.StatusOK), "content": jsonContent(map[string]any{"anyOf": responses})}
	opResponses := map[string]any{"200": responses200}
	for status, codes := range v1CodesByStatus() {
		names := make([]string, len(codes))
		for i, c := range codes {
			names[i] = string(c)
		}
		desc := strings.Join(names, ", ") + "."
		if note := statusNotes[status]; note != "" {
			desc += " " + note
		}
		opResponses[strconv.Itoa(status)] = map[string]any{
			"description": desc,
			"headers":     headers(status),
			"content": jsonContent(map[string]any{"allOf": []any{ref("Error"),
				map[string]any{"properties": map[string]any{"code": map[string]any{"enum": names}}}}}),
		}
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "perpgate",
			"version":     version,
			"description": "One JSON endpoint in front of Hyperliquid, Paradex, Binance USDⓈ-M, Bybit, OKX, Aster and a paper exchange. Decimals are JSON strings; times are Unix seconds.",
			"license":     map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"},
		},
		"servers": []any{map[string]any{
			"url":         "{scheme}://{host}",
			"description": "Your perpgate gateway; `make run` listens on http://localhost:8080.",
			"variables": map[string]any{
				"scheme": map[string]any{"default": "http", "enum": []string{"http", "https"}},
				"host":   map[string]any{"default": "localhost:8080", "description": "Host and port of the gateway (PERPGATE_LISTEN_ADDR)."},
			},
		}},
		"security": []any{map[string]any{"apiKey": []any{}}, map[string]any{"bearer": []any{}}},
		"paths": map[string]any{
			"/v1": map[string]any{
				"post": map[string]any{
					"operationId": "call",
					"summary":     "Run one operation; the body's `operation` field selects it.",
					"requestBody": map[string]any{
						"required": true,
						"content": jsonContent(map[string]any{
							"oneOf":         requests,
							"discriminator": map[string]any{"propertyName": "operation", "mapping": mapping},
						}),
					},
					"responses": opResponses,
				},
			},
			"/openapi.json": map[string]any{
				"get": map[string]any{
					"operationId": "openapi",
					"summary":     "This document; no API key needed.",
					"security":    []any{},
					"responses": map[string]any{
						"200": map[string]any{"description": "The OpenAPI 3.1 document of POST /v1.",
							"content": jsonContent(map[string]any{"type": "object"})},
						"405": map[string]any{"description": "METHOD_NOT_ALLOWED: only GET.",
							"content": jsonContent(ref("Error"))},
					},
				},
			},
		},
		"components": map[string]any{
			"schemas": schemas,
			"securitySchemes": map[string]any{
				"apiKey": map[string]any{"type": "apiKey", "in": "header", "name": "X-API-Key"},
				"bearer": map[string]any{"type": "http", "scheme": "bearer"},
			},
		},
	}
	for path, item := range eventPaths(schemas) {
		doc["paths"].(map[string]any)[path] = item
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func jsonContent(schema any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

// notV1 are codes that POST /v1 never answers with: unknown routes and the
// admin API's.
var notV1 = map[Code]bool{CodeNotFound: true, CodeKeyLimitReached: true, CodeAdminUnauthorized: true,
	CodeAccountNotFound: true, CodeAPIKeyNotFound: true}

// V1Codes returns the error codes POST /v1 (and an MCP tool call) may
// answer with, sorted.
func V1Codes() []Code {
	out := make([]Code, 0, len(codeStatus))
	for c := range codeStatus {
		if !notV1[c] {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

func v1CodesByStatus() map[int][]Code {
	m := map[int][]Code{}
	for _, c := range V1Codes() {
		m[c.Status()] = append(m[c.Status()], c)
	}
	return m
}

// statusNotes say more than the codes about some statuses.
var statusNotes = map[int]string{
	http.StatusBadRequest:            "The message names the field to fix.",
	http.StatusMethodNotAllowed:      "Only POST; the Allow header says so.",
	http.StatusRequestEntityTooLarge: "Bodies are limited to 64 KiB.",
	http.StatusTooManyRequests:       "The minute or day window is full; Retry-After says when to retry.",
	http.StatusInternalServerError:   "A gateway fault; quote the X-Request-Id.",
	http.StatusBadGateway:            "The exchange refused or failed: reason, exchangeCode and exchangeMessage say how.",
	http.StatusConflict:              "The clientOrderId was used before with other parameters; the message names the differing fields.",
	http.StatusServiceUnavailable:    "EXCHANGE_UNAVAILABLE: no connector for the exchange is running. SERVICE_UNAVAILABLE: a dependency of the gateway (Redis, keys service, NATS) is down; Retry-After says when to retry.",
	http.StatusGatewayTimeout:        "For placements the order state is unknown; look it up by clientOrderId before retrying.",
}

// headers lists the response headers of a status: request id and duration
// always; the rate-limit figures once the key is known (not on 401, 405,
// 413); Retry-After on 429 and with SERVICE_UNAVAILABLE.
func headers(status int) map[string]any {
	integer := map[string]any{"schema": map[string]any{"type": "integer"}}
	h := map[string]any{
		"X-Request-Id":          map[string]any{"schema": map[string]any{"type": "string", "format": "uuid"}},
		"X-Request-Duration-Ms": map[string]any{"schema": map[string]any{"type": "string"}, "description": "Gateway latency in milliseconds."},
	}
	switch status {
	case http.StatusUnauthorized, http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge:
	default:
		for _, n := range []string{"X-RateLimit-Limit-Minute", "X-RateLimit-Remaining-Minute", "X-RateLimit-Limit-Day", "X-RateLimit-Remaining-Day"} {
			h[n] = integer
		}
		str := map[string]any{"type": "string"}
		h["RateLimit-Policy"] = map[string]any{"schema": str,
			"description": `IETF draft-ietf-httpapi-ratelimit-headers: "minute";q=<limit>;w=60, "day";q=<limit>;w=86400`}
		h["RateLimit"] = map[string]any{"schema": str,
			"description": `IETF draft-ietf-httpapi-ratelimit-headers: "minute";r=<remaining>;t=<seconds to reset>, "day";r=<remaining>;t=<seconds to reset>`}
	}
	if status == http.StatusUnauthorized {
		h["WWW-Authenticate"] = map[string]any{"schema": map[string]any{"type": "string"}, "required": true,
			"description": `RFC 6750 challenge: Bearer realm="perpgate", error="invalid_token" (absent when no key was sent), error_description with the message.`}
	}
	switch status {
	case http.StatusTooManyRequests:
		h["Retry-After"] = map[string]any{"schema": map[string]any{"type": "integer"}, "required": true, "description": "Seconds to wait."}
	case http.StatusServiceUnavailable:
		h["Retry-After"] = map[string]any{"schema": map[string]any{"type": "integer"}, "description": "Seconds to wait; sent with SERVICE_UNAVAILABLE."}
	}
	return h
}

// Version is perpgate's release, the semantic version in the repository's
// VERSION file (DESIGN §13): the Makefile stamps binaries with that file,
// and a test keeps this constant, OpenAPI, MCP, the CHANGELOG and the k8s
// image tags equal to it.
const Version = "0.2.0"

// APIVersion is the version of the public API described by OpenAPIDocument:
// the release's.
const APIVersion = Version

// OpenAPIDocument is the checked-in openapi.json the edge serves at
// GET /openapi.json; a test keeps it equal to OpenAPI(APIVersion).
//
//go:embed openapi.json
var OpenAPIDocument []byte

// withSuccess adds success:true to a result schema, to each branch of an
// anyOf (a placement's result or its dry run).
func withSuccess(res map[string]any) map[string]any {
	if branches, ok := res["anyOf"].([]any); ok {
		for _, b := range branches {
			withSuccess(b.(map[string]any))
		}
		return res
	}
	res["properties"].(map[string]any)["success"] = map[string]any{"const": true}
	res["required"] = append([]string{"success"}, res["required"].([]string)...)
	return res
}
