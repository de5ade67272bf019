package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
)

type vector = testenv.Vector

func loadVectors(t *testing.T) []vector {
	return testenv.LoadVectors(t, "../testdata/vectors.json", 16)
}

type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// send replays v on s at the vector's clock, with its query, body and
// signature possibly altered.
func send(s *Server, c *clock, v vector, rawQuery, body, sig string) map[string]any {
	c.ms.Store(v.Inputs.ClockMs)
	u, _ := url.Parse(v.Request.URL)
	r := httptest.NewRequest(v.Request.Method, u.Path, strings.NewReader(body))
	r.URL.RawQuery = rawQuery
	for k, val := range v.Request.Headers {
		r.Header.Set(k, val)
	}
	r.Header.Set("X-BAPI-SIGN", sig)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	var env map[string]any
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &env) != nil {
		return map[string]any{"retCode": float64(-rec.Code)}
	}
	return env
}

// flip changes one byte of s.
func flip(s string, i int) string {
	b := []byte(s)
	if b[i] == 'a' {
		b[i] = 'b'
	} else {
		b[i] = 'a'
	}
	return string(b)
}

// TestSimulatorChecksVectorSignatures: every request ccxt signed is
// accepted (retCode is not a signature or key error), and the same request
// with one byte of its payload or signature changed is refused with 10004.
func TestSimulatorChecksVectorSignatures(t *testing.T) {
	vs := loadVectors(t)
	c := &clock{}
	s := New(Config{Now: c.now, Keys: map[string]string{vs[0].Credential["apiKey"]: vs[0].Credential["secret"]}})
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			u, _ := url.Parse(v.Request.URL)
			body := ""
			if v.Request.Body != nil {
				body = *v.Request.Body
			}
			sig := v.Request.Headers["X-BAPI-SIGN"]
			env := send(s, c, v, u.RawQuery, body, sig)
			if code := env["retCode"].(float64); code == 10004 || code == 10003 || code == 10002 || code < 0 {
				t.Fatalf("signed vector refused: %v", env)
			}
			payload := u.RawQuery
			if v.Request.Method == http.MethodPost {
				payload = body
			}
			for _, i := range []int{0, len(payload) / 2, len(payload) - 1} {
				q, b := u.RawQuery, body
				if v.Request.Method == http.MethodPost {
					b = flip(body, i)
				} else {
					q = flip(u.RawQuery, i)
				}
				if env := send(s, c, v, q, b, sig); env["retCode"].(float64) != 10004 {
					t.Errorf("payload byte %d changed: retCode %v, want 10004", i, env["retCode"])
				}
			}
			if env := send(s, c, v, u.RawQuery, body, flip(sig, 5)); env["retCode"].(float64) != 10004 {
				t.Errorf("signature changed: retCode %v, want 10004", env["retCode"])
			}
		})
	}
}

// TestSimulatorTimestampWindow: server_time - recv_window <= timestamp <
// server_time + 1000 (guide, "Authentication"), else 10002.
func TestSimulatorTimestampWindow(t *testing.T) {
	v := loadVectors(t)[len(loadVectors(t))-1] // a GET: balance
	u, _ := url.Parse(v.Request.URL)
	c := &clock{}
	var skew atomic.Int64 // the simulator's clock minus the request's, ms
	s := New(Config{Now: func() time.Time { return c.now().Add(time.Duration(skew.Load()) * time.Millisecond) },
		Keys: map[string]string{v.Credential["apiKey"]: v.Credential["secret"]}})
	for _, tt := range []struct {
		skewMs int64
		ok     bool
	}{{0, true}, {-999, true}, {-1000, false}, {5000, true}, {5001, false}} {
		skew.Store(tt.skewMs)
		env := send(s, c, v, u.RawQuery, "", v.Request.Headers["X-BAPI-SIGN"])
		if ok := env["retCode"].(float64) != 10002; ok != tt.ok {
			t.Errorf("server clock %+d ms from the request: retCode %v, accepted %v, want %v", tt.skewMs, env["retCode"], ok, tt.ok)
		}
	}
}
