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

type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// replayOrder lets each vector succeed: the market buy opens the position
// the reduce-only sell and the stop reduce; the cancel finds the first
// order (ids start where the vectors' do).
var replayOrder = []string{"limit_post_only", "market", "limit_reduce_only", "stop_market", "cancel", "cancel_all", "set_leverage", "balance", "batch_orders", "listen_key"}

// newVectorSim is a simulator whose agents are the vectors' signers and
// whose BTC sits where the vectors' prices make sense.
func newVectorSim(t *testing.T, vs []vector, c *clock) *Server {
	t.Helper()
	agents := map[string]string{}
	for _, v := range vs {
		agents[v.Credential["signerAddress"]] = v.Credential["userAddress"]
	}
	s := New(Config{Now: c.now, Agents: agents, WeightLimit: 1 << 30})
	return s
}

func send(s *Server, c *clock, v vector, rawQuery, body string) *httptest.ResponseRecorder {
	c.ms.Store(v.Inputs.ClockMs)
	u, _ := url.Parse(v.Request.URL)
	r := httptest.NewRequest(v.Request.Method, u.Path, strings.NewReader(body))
	r.URL.RawQuery = rawQuery
	for k, val := range v.Request.Headers {
		r.Header.Set(k, val)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	return rec
}

func byEnv(t *testing.T) map[string][]vector {
	out := map[string][]vector{}
	for _, v := range testenv.LoadVectors(t, "../testdata/vectors.json", 20) {
		out[v.Env] = append(out[v.Env], v)
	}
	return out
}

func pick(vs []vector, suffix string) vector {
	for _, v := range vs {
		if strings.HasSuffix(v.Name, "/"+suffix) {
			return v
		}
	}
	return vector{}
}

// TestVectorsAuthenticate replays every vector of aster.json: each passes
// authentication (no -1022, -2015, -4225, -1021, -1102), and with any one
// byte of its signed string changed, or the signature's, it is refused as
// -1022 (or, where the change breaks a mandatory field, -1102).
func TestVectorsAuthenticate(t *testing.T) {
	for env, vs := range byEnv(t) {
		t.Run(env, func(t *testing.T) {
			c := &clock{}
			s := newVectorSim(t, vs, c)
			for _, name := range replayOrder {
				v := pick(vs, name)
				if v.Name == "" {
					t.Fatalf("no vector %s", name)
				}
				rec := send(s, c, v, v.Query(), v.BodyText())
				if code := errCode(rec); isAuthCode(code) {
					t.Errorf("%s: refused by authentication: %d %s", v.Name, rec.Code, rec.Body)
				}
			}
		})
	}
}

// TestVectorsOneByteChanged: every vector with any one byte of its
// parameter string changed is refused by authentication.
func TestVectorsOneByteChanged(t *testing.T) {
	for env, vs := range byEnv(t) {
		t.Run(env, func(t *testing.T) {
			c := &clock{}
			s := newVectorSim(t, vs, c) // a refusal changes nothing in it
			for _, v := range vs {
				raw := v.Query() + v.BodyText()
				// Every byte of the string: message and signature.
				for i := range len(raw) {
					mut := []byte(raw)
					mut[i] = flip(mut[i])
					q, b := string(mut), ""
					if v.Query() == "" {
						q, b = "", string(mut)
					}
					rec := send(s, c, v, q, b)
					if code := errCode(rec); !isAuthCode(code) {
						t.Errorf("%s with byte %d changed (%q): answered %d %s", v.Name, i, mut, rec.Code, rec.Body)
					}
				}
			}
		})
	}
}

// flip changes a byte to another one of the same class, so the string
// still parses where it did.
func flip(b byte) byte {
	switch {
	case b >= '0' && b <= '8', b >= 'a' && b <= 'e', b >= 'A' && b <= 'E':
		return b + 1
	case b == '9':
		return '0'
	case b == 'f', b == 'F':
		return b - 1
	case b >= 'g' && b <= 'y', b >= 'G' && b <= 'Y':
		return b + 1
	}
	return 'x'
}

func errCode(rec *httptest.ResponseRecorder) int {
	if rec.Code == http.StatusOK {
		return 0
	}
	var e struct {
		Code int `json:"code"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	return e.Code
}

func isAuthCode(code int) bool {
	switch code {
	case -1022, -2015, -4225, -1021, -1102:
		return true
	}
	return false
}
