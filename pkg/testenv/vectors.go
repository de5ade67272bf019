package testenv

import (
	"encoding/json"
	"net/url"
	"os"
	"testing"
)

// Vector is one signed request of a venue's signing-vector file (the
// `vectors` array: name, env, credential, inputs.clockMs, request).
type Vector struct {
	Name       string            `json:"name"`
	Env        string            `json:"env"`
	Credential map[string]string `json:"credential"`
	Inputs     struct {
		ClockMs int64 `json:"clockMs"`
	} `json:"inputs"`
	Request struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Body    *string           `json:"body"`
	} `json:"request"`
}

// Query is the vector's raw query string.
func (v Vector) Query() string {
	u, err := url.Parse(v.Request.URL)
	if err != nil {
		return ""
	}
	return u.RawQuery
}

// BodyText is the vector's body, "" when it has none.
func (v Vector) BodyText() string {
	if v.Request.Body == nil {
		return ""
	}
	return *v.Request.Body
}

// LoadVectors reads the vectors of the file at path and fails t unless
// there are want of them (any number when want is 0).
func LoadVectors(t testing.TB, path string, want int) []Vector {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []Vector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(f.Vectors) == 0 || (want > 0 && len(f.Vectors) != want) {
		t.Fatalf("%s: %d vectors, want %d", path, len(f.Vectors), want)
	}
	return f.Vectors
}
