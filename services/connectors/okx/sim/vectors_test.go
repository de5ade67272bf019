package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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

// send replays v with its body and headers possibly altered (headers with
// an empty value are left out) on s at the vector's clock.
func send(s *Server, c *clock, v vector, body string, headers map[string]string) *httptest.ResponseRecorder {
	c.ms.Store(v.Inputs.ClockMs)
	u, _ := url.Parse(v.Request.URL)
	r := httptest.NewRequest(v.Request.Method, u.RequestURI(), strings.NewReader(body))
	for k, val := range headers {
		if val != "" {
			r.Header.Set(k, val)
		}
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	return rec
}

func newServer(vs []vector, env string, c *clock) *Server {
	c.ms.Store(vs[0].Inputs.ClockMs)
	cr := vs[0].Credential
	return New(Config{Now: c.now, Keys: map[string]Key{cr["apiKey"]: {Secret: cr["secret"], Passphrase: cr["password"], Demo: env == "testnet"}}})
}

type answer struct {
	Code string            `json:"code"`
	Msg  string            `json:"msg"`
	Data []json.RawMessage `json:"data"`
}

// replayOrder runs the vectors so each can succeed: the post-only buy
// rests (ordId ...840), the market buy opens the position (...841) that
// the reduce-only sell and the stop reduce, the cancel takes the first
// order; cancel_all then finds both of its ids already done.
var replayOrder = []string{"limit_post_only", "market", "limit_reduce_only", "stop_market", "cancel", "set_leverage", "balance", "cancel_all"}

// TestVectorsAccepted replays every vector byte for byte as ccxt sent it
// against a simulator whose clock reads the vector's time and whose key
// belongs to the vector's environment: each passes the key, passphrase,
// environment, timestamp and signature checks. ccxt sends the client id
// pub-okx-N as it is, which OKX refuses at the business level (clOrdId is
// 1-32 letters and digits: 51000); those vectors are then sent again with
// the dashes taken out and signed anew, and succeed. cancel_all finds
// both of its ids done by then and answers per item.
func TestVectorsAccepted(t *testing.T) {
	for env, vs := range loadVectors(t) {
		t.Run(env, func(t *testing.T) {
			c := &clock{}
			s := newServer(vs, env, c)
			byOp := map[string]vector{}
			for _, v := range vs {
				byOp[strings.TrimPrefix(v.Name, "okx/"+env+"/")] = v
			}
			for _, op := range replayOrder {
				v := byOp[op]
				body := deref(v.Request.Body)
				rec := send(s, c, v, body, v.Request.Headers)
				var a answer
				_ = json.Unmarshal(rec.Body.Bytes(), &a)
				if strings.Contains(body, "pub-okx-") {
					var item struct{ SCode, SMsg string }
					if len(a.Data) > 0 {
						_ = json.Unmarshal(a.Data[0], &item)
					}
					if rec.Code != http.StatusOK || a.Code != "1" || item.SCode != "51000" || !strings.Contains(item.SMsg, "lOrdId") {
						t.Errorf("%s as ccxt sent it: status %d body %s, want the clOrdId refused after authentication", v.Name, rec.Code, rec.Body)
					}
					body = strings.ReplaceAll(body, "pub-okx-", "pubokx")
					rec = send(s, c, v, body, resigned(v, body))
					a = answer{}
					_ = json.Unmarshal(rec.Body.Bytes(), &a)
				}
				wantCode := "0"
				if op == "cancel_all" {
					wantCode = "1"
				}
				if rec.Code != http.StatusOK || a.Code != wantCode {
					t.Errorf("%s: status %d body %s, want code %s", v.Name, rec.Code, rec.Body, wantCode)
				}
			}
			if n := s.Hits("POST", "/api/v5/trade/order"); n != 6 {
				t.Errorf("%d orders reached the simulator, want 6 (3 refused, 3 placed)", n)
			}
		})
	}
}

// resigned is v's headers with OK-ACCESS-SIGN computed for body.
func resigned(v vector, body string) map[string]string {
	h := map[string]string{}
	for k, val := range v.Request.Headers {
		h[k] = val
	}
	u, _ := url.Parse(v.Request.URL)
	m := hmac.New(sha256.New, []byte(v.Credential["secret"]))
	m.Write([]byte(h["OK-ACCESS-TIMESTAMP"] + v.Request.Method + u.RequestURI() + body))
	h["OK-ACCESS-SIGN"] = base64.StdEncoding.EncodeToString(m.Sum(nil))
	return h
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// authCodes are OKX's answers to a request that fails authentication.
var authCodes = map[string]bool{"50101": true, "50102": true, "50103": true, "50104": true, "50105": true, "50106": true,
	"50107": true, "50111": true, "50112": true, "50113": true}

// TestVectorsOneByteChanged changes each byte of each vector's body, of
// its OK-ACCESS-SIGN and OK-ACCESS-TIMESTAMP, the first byte of its key
// and passphrase, and turns its environment header around: the simulator
// rejects every variant with HTTP 401 and an authentication code before
// acting on it.
func TestVectorsOneByteChanged(t *testing.T) {
	for env, vs := range loadVectors(t) {
		t.Run(env, func(t *testing.T) {
			c := &clock{}
			s := newServer(vs, env, c)
			for _, v := range vs {
				body := deref(v.Request.Body)
				check := func(what string, rec *httptest.ResponseRecorder) {
					t.Helper()
					var a answer
					_ = json.Unmarshal(rec.Body.Bytes(), &a)
					if rec.Code != http.StatusUnauthorized || !authCodes[a.Code] {
						t.Errorf("%s with %s: status %d body %s, want an authentication rejection", v.Name, what, rec.Code, rec.Body)
					}
				}
				with := func(k, val string) map[string]string {
					h := map[string]string{}
					for hk, hv := range v.Request.Headers {
						h[hk] = hv
					}
					h[k] = val
					return h
				}
				for i := range len(body) {
					check("body byte "+body[:i]+"^", send(s, c, v, flip(body, i), v.Request.Headers))
				}
				for _, h := range []string{"OK-ACCESS-SIGN", "OK-ACCESS-TIMESTAMP"} {
					val := v.Request.Headers[h]
					for i := range len(val) {
						check(h+" byte "+val[:i]+"^", send(s, c, v, body, with(h, flip(val, i))))
					}
				}
				check("key byte 0", send(s, c, v, body, with("OK-ACCESS-KEY", flip(v.Credential["apiKey"], 0))))
				check("passphrase byte 0", send(s, c, v, body, with("OK-ACCESS-PASSPHRASE", flip(v.Credential["password"], 0))))
				demo := "1"
				if env == "testnet" {
					demo = ""
				}
				check("the other environment", send(s, c, v, body, with("x-simulated-trading", demo)))
			}
			if n := s.Hits("POST", "/api/v5/trade/order"); n == 0 {
				t.Fatal("no order request reached the simulator")
			}
			if o, _ := s.Engine().OpenOrders(vs[0].Credential["apiKey"], ""); len(o) != 0 {
				t.Errorf("a changed request placed orders: %v", o)
			}
		})
	}
}

// flip replaces byte i with a different one.
func flip(s string, i int) string {
	c := byte('0')
	if s[i] == '0' {
		c = '1'
	}
	return s[:i] + string(c) + s[i+1:]
}
