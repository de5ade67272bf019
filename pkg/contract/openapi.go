package contract

import (
	_ "embed"
	"encoding/json"
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
		schemas[name+"Request"] = req
		res := op.OutputSchema()
		resProps := res["properties"].(map[string]any)
		resProps["success"] = map[string]any{"const": true}
		res["required"] = append([]string{"success"}, res["required"].([]string)...)
		schemas[name+"Response"] = res
		requests = append(requests, ref(name+"Request"))
		responses = append(responses, ref(name+"Response"))
		mapping[op.Name] = "#/components/schemas/" + name + "Request"
	}
	errResp := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": jsonContent(ref("Error"))}
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "perpgate",
			"version":     version,
			"description": "One JSON endpoint in front of Hyperliquid, Paradex, Binance USDⓈ-M, Bybit, OKX and a paper exchange. Decimals are JSON strings; times are Unix seconds.",
		},
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
					"responses": map[string]any{
						"200": map[string]any{"description": "Success: `success:true` plus the operation's fields.",
							"headers": rateHeaders(), "content": jsonContent(map[string]any{"oneOf": responses})},
						"400": errResp("Bad request: INVALID_JSON, MISSING_OPERATION, UNKNOWN_OPERATION, INVALID_REQUEST, UNKNOWN_MARKET."),
						"401": errResp("Authentication: MISSING_API_KEY, INVALID_KEY_FORMAT, INVALID_API_KEY, KEY_REVOKED, KEY_EXPIRED."),
						"403": errResp("Not allowed: TIER_INSUFFICIENT, OPERATION_NOT_ALLOWED, CREDENTIAL_NOT_ALLOWED, EXCHANGE_NOT_ALLOWED, ENVIRONMENT_MISMATCH."),
						"404": errResp("CREDENTIAL_NOT_FOUND."),
						"405": errResp("METHOD_NOT_ALLOWED: only POST."),
						"413": errResp("PAYLOAD_TOO_LARGE: bodies are limited to 64 KiB."),
						"429": errResp("RATE_LIMITED: see Retry-After."),
						"500": errResp("INTERNAL_ERROR."),
						"502": errResp("EXCHANGE_ERROR with reason, exchangeCode and exchangeMessage."),
						"503": errResp("EXCHANGE_UNAVAILABLE: no connector for the exchange is running."),
						"504": errResp("EXCHANGE_TIMEOUT: for placements the order state is unknown; look it up by clientOrderId."),
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

func rateHeaders() map[string]any {
	h := map[string]any{}
	for _, n := range []string{"X-RateLimit-Limit-Minute", "X-RateLimit-Remaining-Minute", "X-RateLimit-Limit-Day", "X-RateLimit-Remaining-Day"} {
		h[n] = map[string]any{"schema": map[string]any{"type": "integer"}}
	}
	h["X-Request-Id"] = map[string]any{"schema": map[string]any{"type": "string", "format": "uuid"}}
	h["X-Request-Duration-Ms"] = map[string]any{"schema": map[string]any{"type": "string"}}
	return h
}

// APIVersion is the version of the public API described by OpenAPIDocument.
const APIVersion = "1.0.0"

// OpenAPIDocument is the checked-in openapi.json the edge serves at
// GET /openapi.json; a test keeps it equal to OpenAPI(APIVersion).
//
//go:embed openapi.json
var OpenAPIDocument []byte
