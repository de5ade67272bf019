package contract

import (
	"net/http"
	"strconv"
)

// eventPaths documents GET /v1/events (Server-Sent Events) and GET /v1/ws
// (WebSocket) for the OpenAPI document, with the Event schema they carry.
func eventPaths(schemas map[string]any) map[string]any {
	schemas["Event"] = eventSchema()
	query := func(name, desc string) map[string]any {
		return map[string]any{"name": name, "in": "query", "description": desc, "schema": map[string]any{"type": "string"}}
	}
	params := []any{
		map[string]any{"name": "credentialId", "in": "query", "required": true, "description": "The credential whose events to stream.",
			"schema": map[string]any{"type": "string", "format": "uuid"}},
		query("types", "Only these event types, comma-separated: order, fill, position, balance, funding, error."),
		query("markets", "Only events of these markets, comma-separated (any accepted spelling); events of no market (balance) always pass."),
		query("after", "Resume after this event id (same as the Last-Event-ID header); a point older than the retention starts with a reset event."),
		query("api_key", "The API key, for clients that cannot send headers (EventSource); X-API-Key or Authorization: Bearer otherwise."),
		map[string]any{"name": "Last-Event-ID", "in": "header", "description": "The id of the last event received: the stream resumes right after it.",
			"schema": map[string]any{"type": "string"}},
	}
	errs := func(extra string) map[string]any {
		out := map[string]any{}
		for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
			desc := "The /v1 error envelope, before the stream starts: the same codes as POST /v1 for authentication, scope and credential."
			if status == http.StatusTooManyRequests {
				desc = "RATE_LIMITED: the key's rate limit, or its cap of open event streams (free 2, builder 10, pro 50)."
			}
			out[strconv.Itoa(status)] = map[string]any{"description": desc + extra, "headers": headers(status),
				"content": jsonContent(ref("Error"))}
		}
		return out
	}
	sse := errs("")
	sse["200"] = map[string]any{
		"description": "The event stream: per event an `id:` line (the event id) and a `data:` line holding one Event as JSON; a `: keep-alive` comment every 15 s.",
		"content":     map[string]any{"text/event-stream": map[string]any{"schema": ref("Event")}},
	}
	ws := errs(" A refusal after the upgrade is a message {\"op\":\"error\",\"code\",\"error\"}.")
	ws["101"] = map[string]any{"description": "Switching to WebSocket. Client messages: {\"op\":\"subscribe\",\"credentialId\",\"after?\",\"types?\",\"markets?\"} " +
		"(types and markets as arrays of strings) and {\"op\":\"unsubscribe\",\"credentialId\"}. Server messages: {\"op\":\"subscribed\",\"credentialId\"}, " +
		"{\"op\":\"event\",\"event\":Event} and {\"op\":\"error\",\"code\",\"error\"}."}
	ws["200"] = map[string]any{"description": "Not sent: a WebSocket upgrade answers 101.", "content": jsonContent(ref("Event"))}
	return map[string]any{
		"/v1/events": map[string]any{"get": map[string]any{
			"operationId": "events", "summary": "Stream a credential's account events (orders, fills, positions, balances, funding) as Server-Sent Events.",
			"parameters": params, "responses": sse, "x-perpgate-extension": true,
		}},
		"/v1/ws": map[string]any{"get": map[string]any{
			"operationId": "eventsWebSocket", "summary": "Account events of several credentials on one WebSocket.",
			"parameters": []any{params[4]}, "responses": ws, "x-perpgate-extension": true,
		}},
	}
}

func eventSchema() map[string]any {
	types := make([]string, len(EventTypes))
	for i, t := range EventTypes {
		types[i] = string(t)
	}
	str := map[string]any{"type": "string"}
	ms := map[string]any{"type": "integer", "description": "Unix time in milliseconds"}
	return map[string]any{
		"type":     "object",
		"required": []string{"id", "type", "credentialId", "exchange", "time", "receivedAt", "source", "data"},
		"properties": map[string]any{
			"id":           map[string]any{"type": "string", "description": "Opaque event id: resume after it with Last-Event-ID or after=."},
			"type":         map[string]any{"type": "string", "enum": types},
			"credentialId": str,
			"exchange":     typeSchema(exchangeType),
			"time":         ms,
			"receivedAt":   ms,
			"source":       map[string]any{"type": "string", "enum": []string{SourceStream, SourceReconcile}},
			"data":         map[string]any{"type": "object", "description": "By type: order, fill, position, balance, funding, error {code, message}, reset {} (see docs/api.md, Account events)."},
		},
	}
}
