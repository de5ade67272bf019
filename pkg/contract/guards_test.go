package contract

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestPatchGuardsCapGrammar: notional caps take the /v1 decimal grammar
// and an upper bound; a refusal is INVALID_REQUEST naming the field.
func TestPatchGuardsCapGrammar(t *testing.T) {
	for _, name := range []string{"maxOrderNotional", "maxDailyNotional", "maxPositionNotional"} {
		for _, tt := range []struct {
			raw     string
			mention string
		}{
			{`"1e10000"`, "no exponent"},
			{`"1E3"`, "no exponent"},
			{`"1000000000000.01"`, "up to 1000000000000"},
			{`"` + strings.Repeat("1", 41) + `"`, "at most 40 characters"},
			{`"-5"`, "greater than zero"},
			{`"0"`, "greater than zero"},
			{`1000`, "decimal string"},
			{`" 10"`, "plain decimal"},
		} {
			_, ce := PatchGuards(Guards{}, map[string]json.RawMessage{name: json.RawMessage(tt.raw)})
			if ce == nil || ce.Code != CodeInvalidRequest || !strings.Contains(ce.Message, name) || !strings.Contains(ce.Message, tt.mention) {
				t.Errorf("%s = %s: got %v, want INVALID_REQUEST naming %s and %q", name, tt.raw, ce, name, tt.mention)
			}
		}
		g, ce := PatchGuards(Guards{}, map[string]json.RawMessage{name: json.RawMessage(`"1000000000000"`)})
		if ce != nil || (*g.cap(name)).String() != "1000000000000" {
			t.Errorf("%s at the bound: %v %+v", name, ce, g)
		}
	}
	huge := decimal.RequireFromString("1e10000")
	if _, ce := (Guards{MaxPositionNotional: &huge}).Normalize(); ce == nil || !strings.Contains(ce.Message, "maxPositionNotional") {
		t.Errorf("Normalize accepted a 1e10000 cap: %v", ce)
	}
}

// TestPatchGuardsPositionNotional: maxPositionNotional is set, kept when
// absent, removed by null, and makes the edge send the guards along.
func TestPatchGuardsPositionNotional(t *testing.T) {
	g, ce := PatchGuards(Guards{}, map[string]json.RawMessage{"maxPositionNotional": json.RawMessage(`"2500.5"`)})
	if ce != nil || g.MaxPositionNotional == nil || g.MaxPositionNotional.String() != "2500.5" {
		t.Fatalf("set: %v %+v", ce, g)
	}
	if !g.Trading() {
		t.Fatal("a key with only maxPositionNotional is not Trading(): the edge would not send its guards to the connector")
	}
	g, ce = PatchGuards(g, map[string]json.RawMessage{"readOnly": json.RawMessage(`true`)})
	if ce != nil || g.MaxPositionNotional == nil {
		t.Fatalf("absent field dropped: %v %+v", ce, g)
	}
	k := KeyInfo{ID: "k", CreatedAt: time.Unix(0, 0).UTC(), Guards: g}
	var back KeyInfo
	if b, err := json.Marshal(k); err != nil || json.Unmarshal(b, &back) != nil || back.MaxPositionNotional == nil || !back.MaxPositionNotional.Equal(*g.MaxPositionNotional) {
		t.Fatalf("KeyInfo JSON lost maxPositionNotional: %+v", back.Guards)
	}
	g, ce = PatchGuards(g, map[string]json.RawMessage{"maxPositionNotional": json.RawMessage(`null`)})
	if ce != nil || g.MaxPositionNotional != nil {
		t.Fatalf("null: %v %+v", ce, g)
	}
}
