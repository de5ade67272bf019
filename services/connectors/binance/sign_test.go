package binance

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// vector is one request of shared/vectors/binance.json (copied to testdata).
type vector = testenv.Vector

func loadVectors(t *testing.T) []vector { return testenv.LoadVectors(t, "testdata/vectors.json", 16) }

// splitSigned returns a vector's signed payload (query string then body,
// the signature pair removed) and its signature.
func splitSigned(t *testing.T, v vector) (string, string) {
	t.Helper()
	u, err := url.Parse(v.Request.URL)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	sig := ""
	for _, raw := range []string{u.RawQuery, deref(v.Request.Body)} {
		var keep []string
		for _, p := range strings.Split(raw, "&") {
			if s, ok := strings.CutPrefix(p, "signature="); ok {
				sig = s
				continue
			}
			if p != "" {
				keep = append(keep, p)
			}
		}
		parts = append(parts, strings.Join(keep, "&"))
	}
	return parts[0] + parts[1], sig
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestSignReproducesVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			payload, want := splitSigned(t, v)
			if got := sign(v.Credential["secret"], payload); got != want {
				t.Errorf("sign(%q) = %s, want %s", payload, got, want)
			}
			if v.Request.Headers["X-MBX-APIKEY"] != v.Credential["apiKey"] {
				t.Errorf("vector sends the key in X-MBX-APIKEY")
			}
		})
	}
}

// TestSignDocumentedExample is Binance's own HMAC example (fact sheet §2.1),
// including the query+body concatenation with no separator.
func TestSignDocumentedExample(t *testing.T) {
	const secret = "2b5eb11e18796d12d88f13dc27dbbd02c2cc51ff7059765ed9821957d82bb4d9"
	tests := []struct {
		name, payload, want string
	}{
		{"all in query or body", "symbol=BTCUSDT&side=BUY&type=LIMIT&quantity=1&price=9000&timeInForce=GTC&recvWindow=5000&timestamp=1591702613943",
			"3c661234138461fcc7a7d8746c6558c9842d4e10870d2ecbedf7777cad694af9"},
		{"query then body, doc's stray space", "symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTCquantity=1&price=9000&recvWindow=5000&timestamp= 1591702613943",
			"f9d0ae5e813ef6ccf15c2b5a434047a0181cb5a342b903b367ca6d27a66e36f2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sign(secret, tt.payload); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestSignedPayloadMatchesVectors builds each vector's request with the
// connector's own builder (same parameters, timestamp and recvWindow) and
// checks it sends the same parameters and a signature of exactly what it
// sends.
func TestSignedPayloadMatchesVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			payload, _ := splitSigned(t, v)
			var p connector.Query
			recv := int64(0)
			for _, kv := range strings.Split(payload, "&") {
				k, val, _ := strings.Cut(kv, "=")
				switch k {
				case "timestamp":
				case "recvWindow":
					recv, _ = strconv.ParseInt(val, 10, 64)
				default:
					dec, _ := url.QueryUnescape(val)
					p = p.Add(k, dec)
				}
			}
			sent := signedPayload(p, v.Credential["secret"], v.Inputs.ClockMs, recv)
			body, sig, ok := strings.Cut(sent, "&signature=")
			if !ok || sign(v.Credential["secret"], body) != sig {
				t.Fatalf("sent %q does not end with the signature of what precedes it", sent)
			}
			want := strings.Split(payload, "&")
			got := strings.Split(body, "&")
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("parameters differ:\n got %v\nwant %v", got, want)
			}
		})
	}
}
