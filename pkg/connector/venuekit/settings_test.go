package venuekit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// TestEnvGathersEveryProblem: a bad URL, a bad number of milliseconds and
// a bad timeout are all reported at once, each naming its setting.
func TestEnvGathersEveryProblem(t *testing.T) {
	vars := map[string]string{"PERPGATE_X_URL": "ftp://x", "PERPGATE_X_WINDOW": "soon"}
	e := venuekit.NewEnv(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	r := venuekit.NewREST("https://a.example", "https://b.example")
	r.Timeout = 0
	window := 5 * time.Second
	if !e.String("PERPGATE_X_URL", &r.MainnetURL, &r.TestnetURL) || r.TestnetURL != "ftp://x" {
		t.Fatalf("URL not applied to both bases: %+v", r)
	}
	e.Millis("PERPGATE_X_WINDOW", &window)
	err := e.Err(r.Check("X", "PERPGATE_X_URL", "https://a.example"))
	for _, want := range []string{"PERPGATE_X_WINDOW", "X mainnet URL", "X testnet URL", "timeout must be positive"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
}

// TestRESTBaseURL: the credential's environment picks the base, without a
// trailing slash, and a simulator's http base gives its ws one.
func TestRESTBaseURL(t *testing.T) {
	r := venuekit.NewREST("https://main.example/", "https://test.example/v1/")
	if r.BaseURL(contract.Mainnet) != "https://main.example" || r.BaseURL(contract.Testnet) != "https://test.example/v1" {
		t.Fatalf("bases %q %q", r.BaseURL(contract.Mainnet), r.BaseURL(contract.Testnet))
	}
	if got := venuekit.WSURL("http://127.0.0.1:8091/"); got != "ws://127.0.0.1:8091" {
		t.Fatalf("WSURL = %q", got)
	}
}
