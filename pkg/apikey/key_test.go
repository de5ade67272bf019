package apikey

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// holder stands for any struct that carries a key, exported or not.
type holder struct {
	Public  Key
	private Key
}

func TestKeyMasking(t *testing.T) {
	k, err := Generate(EnvLive)
	if err != nil {
		t.Fatal(err)
	}
	raw := k.Reveal()
	secret := raw[DisplayLength:] // the part that must never show
	masked := raw[:DisplayLength] + "****"
	h := holder{Public: k, private: k}
	tests := []struct {
		name string
		got  string
		want string // exact output, or "" to only check the secret is absent
	}{
		{name: "v", got: fmt.Sprintf("%v", k), want: masked},
		{name: "s", got: fmt.Sprintf("%s", k), want: masked},
		{name: "plus v", got: fmt.Sprintf("%+v", k), want: masked},
		{name: "sharp v", got: fmt.Sprintf("%#v", k), want: `apikey.Key("` + masked + `")`},
		{name: "q", got: fmt.Sprintf("%q", k), want: `"` + masked + `"`},
		{name: "x", got: fmt.Sprintf("%x", k), want: masked},
		{name: "pointer", got: fmt.Sprintf("%v", &k), want: masked},
		{name: "Sprint", got: fmt.Sprint(k), want: masked},
		{name: "Println", got: fmt.Sprintln(k), want: masked + "\n"},
		{name: "String", got: k.String(), want: masked},
		{name: "in struct v", got: fmt.Sprintf("%v", h)},
		{name: "in struct plus v", got: fmt.Sprintf("%+v", h)},
		{name: "in struct sharp v", got: fmt.Sprintf("%#v", h)},
		{name: "in slice", got: fmt.Sprintf("%v", []Key{k}), want: "[" + masked + "]"},
		{name: "in map", got: fmt.Sprintf("%v", map[string]Key{"k": k}), want: "map[k:" + masked + "]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.got, secret) {
				t.Fatalf("output %q contains the secret part of the key", tt.got)
			}
			if tt.want != "" && tt.got != tt.want {
				t.Fatalf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestKeyMaskingSlogAndJSON(t *testing.T) {
	k, err := Generate(EnvTest)
	if err != nil {
		t.Fatal(err)
	}
	secret := k.Reveal()[DisplayLength:]
	masked := k.Display() + "****"

	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("key created", "key", k, "ptr", &k, slog.Any("any", k), slog.Group("g", "key", k), "holder", holder{Public: k, private: k})
	textLog := slog.New(slog.NewTextHandler(&buf, nil))
	textLog.Info("key created", "key", k, "holder", holder{Public: k, private: k})
	if strings.Contains(buf.String(), secret) {
		t.Fatalf("slog output contains the key: %s", buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(buf.String(), "\n", 2)[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["key"] != masked || rec["ptr"] != masked || rec["any"] != masked {
		t.Fatalf("logged key fields = %v %v %v, want %q", rec["key"], rec["ptr"], rec["any"], masked)
	}

	out, err := json.Marshal(holder{Public: k})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Public":"` + masked + `"}`; string(out) != want {
		t.Fatalf("json = %s, want %s", out, want)
	}
}

func TestKeyZero(t *testing.T) {
	var k Key
	if k.Reveal() != "" || k.String() != "" || fmt.Sprint(k) != "" {
		t.Fatalf("zero key prints %q", fmt.Sprint(k))
	}
	if _, err := k.Env(); err != ErrFormat {
		t.Fatalf("zero key Env error %v, want ErrFormat", err)
	}
}

func TestFromString(t *testing.T) {
	raw := "mt_test_" + strings.Repeat("Q", BodyLength)
	k := FromString(raw)
	if k.Reveal() != raw || k.Hash() != Hash(raw) || k.Display() != "mt_test_QQQQ" {
		t.Fatalf("FromString round trip failed: %q", k)
	}
}

// TestKeyLogValue checks that slog resolves a Key to a plain masked string
// before any handler sees it, so even a handler that dumps values with
// reflection gets only the mask.
func TestKeyLogValue(t *testing.T) {
	k := FromString("mt_live_" + strings.Repeat("S", BodyLength))
	var seen []slog.Value
	h := slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "key" {
			seen = append(seen, a.Value)
		}
		return a
	}})
	slog.New(h).Info("x", "key", k, "key", &k)
	if len(seen) != 2 {
		t.Fatalf("saw %d key attributes, want 2", len(seen))
	}
	for i, v := range seen {
		if v.Kind() != slog.KindString || v.String() != "mt_live_SSSS****" {
			t.Fatalf("attribute %d resolved to %v %q, want the masked string", i, v.Kind(), v.String())
		}
	}
}
