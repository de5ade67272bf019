package contract

import (
	"encoding/json"
	"testing"
)

func TestOpenAPIDocumentsTheEventStreams(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Extension bool                       `json:"x-perpgate-extension"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	sse := doc.Paths["/v1/events"]["get"]
	var ok200 struct {
		Content map[string]json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(sse.Responses["200"], &ok200)
	if _, ok := ok200.Content["text/event-stream"]; !ok || !sse.Extension {
		t.Errorf("GET /v1/events: 200 content %v, extension %v; want text/event-stream, an extension", ok200.Content, sse.Extension)
	}
	if ws := doc.Paths["/v1/ws"]["get"]; ws.Responses["101"] == nil || ws.Responses["401"] == nil {
		t.Errorf("GET /v1/ws responses %v, want 101 and the error envelope", ws.Responses)
	}
	var v1 struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	_ = json.Unmarshal(OpenAPIDocument, &v1)
	for _, name := range []string{"WaitForOrderRequest", "GetEventsRequest"} {
		if v1.Components.Schemas[name]["x-perpgate-extension"] != true {
			t.Errorf("%s is not marked x-perpgate-extension", name)
		}
	}
	if v1.Components.Schemas["GetMarkPriceRequest"]["x-perpgate-extension"] != nil {
		t.Error("a core operation is marked as an extension")
	}
}
