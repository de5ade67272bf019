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

func loadVectors(t *testing.T) map[string][]vector {
	t.Helper()
	byEnv := map[string][]vector{}
	for _, v := range testenv.LoadVectors(t, "../testdata/vectors.json", 16) {
		byEnv[v.Env] = append(byEnv[v.Env], v)
	}
	return byEnv
}

// clock is a settable clock for the simulator.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// send replays v (with its query and body possibly altered) on s at the
// vector's clock.
func send(s *Server, c *clock, v vector, rawQuery, body, apiKey string) *httptest.ResponseRecorder {
	c.ms.Store(v.Inputs.ClockMs)
	u, _ := url.Parse(v.Request.URL)
	r := httptest.NewRequest(v.Request.Method, u.Path, strings.NewReader(body))
	r.URL.RawQuery = rawQuery
	for k, val := range v.Request.Headers {
		r.Header.Set(k, val)
	}
	r.Header.Set("X-MBX-APIKEY", apiKey)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	return rec
}

func parts(v vector) (string, string) {
	u, _ := url.Parse(v.Request.URL)
	body := ""
	if v.Request.Body != nil {
		body = *v.Request.Body
	}
	return u.RawQuery, body
}

// replayOrder runs the vectors so each can succeed: the market buy opens
// the position the reduce-only sell and the stop reduce, and the cancel
// finds the first order (ids start where the vectors' do).
var replayOrder = []string{"limit_post_only", "market", "limit_reduce_only", "stop_market", "cancel", "cancel_all", "set_leverage", "balance"}

// TestVectorsAccepted replays every vector, byte for byte as ccxt sent it,
// against a simulator whose clock reads the vector's time: each passes the
// key, timestamp and signature checks and succeeds.
func TestVectorsAccepted(t *testing.T) {
	for env, vs := range loadVectors(t) {
		t.Run(env, func(t *testing.T) {
			c := &clock{}
			c.ms.Store(vs[0].Inputs.ClockMs)
			s := New(Config{Now: c.now, Keys: map[string]string{vs[0].Credential["apiKey"]: vs[0].Credential["secret"]}})
			byOp := map[string]vector{}
			for _, v := range vs {
				byOp[strings.TrimPrefix(v.Name, "binance/"+env+"/")] = v
			}
			for _, op := range replayOrder {
				v := byOp[op]
				q, b := parts(v)
				rec := send(s, c, v, q, b, v.Credential["apiKey"])
				if rec.Code != http.StatusOK {
					t.Errorf("%s: status %d body %s", v.Name, rec.Code, rec.Body)
				}
			}
		})
	}
}

// authCodes are the answers of a request that fails Binance's checks.
var authCodes = map[int]bool{-1022: true, -1021: true, -1102: true, -2014: true, -2015: true, -1131: true}

// TestVectorsOneByteChanged changes each byte of each vector's signed
// request (query string, body and signature) and the API key in turn: the
// simulator rejects every variant as Binance would, before acting on it.
func TestVectorsOneByteChanged(t *testing.T) {
	for env, vs := range loadVectors(t) {
		t.Run(env, func(t *testing.T) {
			c := &clock{}
			s := New(Config{Now: c.now, WeightLimit: 1 << 30, Keys: map[string]string{vs[0].Credential["apiKey"]: vs[0].Credential["secret"]}})
			for _, v := range vs {
				q, b := parts(v)
				check := func(what string, rec *httptest.ResponseRecorder) {
					t.Helper()
					var e struct {
						Code int `json:"code"`
					}
					_ = json.Unmarshal(rec.Body.Bytes(), &e)
					if rec.Code == http.StatusOK || !authCodes[e.Code] {
						t.Errorf("%s with %s: status %d body %s, want a signature/timestamp/key rejection", v.Name, what, rec.Code, rec.Body)
					}
				}
				for i := range len(q) {
					check("query byte "+q[:i]+"^", send(s, c, v, flip(q, i), b, v.Credential["apiKey"]))
				}
				for i := range len(b) {
					check("body byte "+b[:i]+"^", send(s, c, v, q, flip(b, i), v.Credential["apiKey"]))
				}
				check("api key byte 0", send(s, c, v, q, b, flip(v.Credential["apiKey"], 0)))
			}
			if n := s.Hits("POST", "/fapi/v1/order"); n == 0 {
				t.Fatal("no order request reached the simulator")
			}
			if o, _ := s.Engine().OpenOrders(vs[0].Credential["apiKey"], ""); len(o) != 0 {
				t.Errorf("a changed request placed orders: %v", o)
			}
		})
	}
}

// flip replaces byte i with a different one that is not its other case
// (Binance reads the signature's hex case-insensitively).
func flip(s string, i int) string {
	c := byte('0')
	if s[i] == '0' {
		c = '1'
	}
	return s[:i] + string(c) + s[i+1:]
}
