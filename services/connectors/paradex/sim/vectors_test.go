package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
)

type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// replay sends a vector's request (its headers, with body and headers
// possibly altered) at the vector's clock.
func replay(s *Server, c *clock, v testenv.Vector, body string, hdr map[string]string) *httptest.ResponseRecorder {
	c.ms.Store(v.Inputs.ClockMs)
	u, _ := url.Parse(v.Request.URL)
	r := httptest.NewRequest(v.Request.Method, u.Path, strings.NewReader(body))
	r.URL.RawQuery = u.RawQuery
	for k, val := range v.Request.Headers {
		r.Header.Set(k, val)
	}
	for k, val := range hdr {
		r.Header.Set(k, val)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	return rec
}

func errorCode(rec *httptest.ResponseRecorder) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	return e.Error
}

// flipDigit changes one digit of s at i (a felt changed by one digit).
func flipDigit(s string, i int) string {
	b := []byte(s)
	if b[i] == '1' {
		b[i] = '2'
	} else {
		b[i] = '1'
	}
	return string(b)
}

// TestSimulatorChecksVectorSignatures: per environment, ccxt's auth request
// gets a JWT and each of its signed orders is accepted (201 NEW) with it;
// the same requests with one felt of the signed payload or one digit of the
// signature changed are refused.
func TestSimulatorChecksVectorSignatures(t *testing.T) {
	all := testenv.LoadVectors(t, "../testdata/vectors.json", 18)
	for _, env := range []string{"mainnet", "testnet"} {
		t.Run(env, func(t *testing.T) {
			c := &clock{}
			chain := stark.ChainMainnet
			if env == "testnet" {
				chain = stark.ChainTestnet
			}
			var vs []testenv.Vector
			for _, v := range all {
				if v.Env == env {
					vs = append(vs, v)
				}
			}
			cred := vs[0].Credential
			s := New(Config{Now: c.now, ChainID: chain, Accounts: map[string]string{cred["address"]: cred["starkPublicKey"]}})
			auth := vs[0]
			if !strings.HasSuffix(auth.Name, "/auth") {
				t.Fatalf("first vector %s is not the auth request", auth.Name)
			}
			sig := auth.Request.Headers["PARADEX-STARKNET-SIGNATURE"]
			for name, hdr := range map[string]map[string]string{
				"signature r":  {"PARADEX-STARKNET-SIGNATURE": flipDigit(sig, 5)},
				"signature s":  {"PARADEX-STARKNET-SIGNATURE": flipDigit(sig, len(sig)-4)},
				"timestamp":    {"PARADEX-TIMESTAMP": flipDigit(auth.Request.Headers["PARADEX-TIMESTAMP"], 9)},
				"expiration":   {"PARADEX-SIGNATURE-EXPIRATION": flipDigit(auth.Request.Headers["PARADEX-SIGNATURE-EXPIRATION"], 9)},
				"account felt": {"PARADEX-STARKNET-ACCOUNT": flipDigit(auth.Request.Headers["PARADEX-STARKNET-ACCOUNT"], 10)},
			} {
				if rec := replay(s, c, auth, "", hdr); rec.Code == http.StatusOK {
					t.Errorf("auth with %s changed: accepted", name)
				}
			}
			rec := replay(s, c, auth, "", nil)
			var tok struct {
				JWT string `json:"jwt_token"`
			}
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &tok) != nil || tok.JWT == "" {
				t.Fatalf("%s: %d %s", auth.Name, rec.Code, rec.Body)
			}
			bearer := map[string]string{"Authorization": "Bearer " + tok.JWT}
			orders := 0
			for _, v := range vs[1:] {
				body := v.BodyText()
				if !strings.Contains(body, `"signature"`) {
					continue
				}
				orders++
				var o map[string]any
				_ = json.Unmarshal([]byte(body), &o)
				// One felt of the signed message changed each time, then the
				// signature itself: all refused before the original is sent
				// (its client_id would then be a duplicate).
				mutations := map[string]map[string]any{
					"size":      {"size": "0.02"},
					"side":      {"side": map[string]string{"BUY": "SELL", "SELL": "BUY"}[o["side"].(string)]},
					"timestamp": {"signature_timestamp": v.Inputs.ClockMs - 1},
					"signature": {"signature": flipDigit(o["signature"].(string), 6)},
				}
				if o["type"] == "LIMIT" {
					mutations["price"] = map[string]any{"price": "90001"}
				}
				for name, m := range mutations {
					changed := map[string]any{}
					for k, val := range o {
						changed[k] = val
					}
					for k, val := range m {
						changed[k] = val
					}
					raw, _ := json.Marshal(changed)
					if rec := replay(s, c, v, string(raw), bearer); rec.Code != http.StatusBadRequest || errorCode(rec) != "INVALID_ORDER_SIGNATURE" {
						t.Errorf("%s with %s changed: %d %s", v.Name, name, rec.Code, rec.Body)
					}
				}
				rec := replay(s, c, v, body, bearer)
				var back struct {
					ID     string `json:"id"`
					Status string `json:"status"`
				}
				if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &back) != nil || back.Status != "NEW" || len(back.ID) != 28 {
					t.Errorf("%s: %d %s", v.Name, rec.Code, rec.Body)
				}
			}
			if orders != 4 {
				t.Fatalf("%d signed orders, want 4", orders)
			}
			// ccxt's own JWT is the fake server's; this simulator refuses it.
			if rec := replay(s, c, vs[len(vs)-1], "", nil); rec.Code != http.StatusUnauthorized {
				t.Errorf("a foreign JWT: %d", rec.Code)
			}
		})
	}
}

// TestAuthChecks: an expired signature, an unknown account and a key that
// does not sign for the account are refused with Paradex's codes.
func TestAuthChecks(t *testing.T) {
	c := &clock{}
	c.ms.Store(time.Now().UnixMilli())
	key, _ := stark.ParseKey("0x543b6cf6c91817a87174aaea4fb370ac1c694e864d7740d728f8344d53e815")
	other, _ := stark.ParseKey("0x2df9494fb7408922820789bb930a61fc246e8d20206e161cd6576b5c48f8c5b")
	addr, _ := stark.ParseFelt("0x129c135ed63df9353885e292be4426b8ed6122b13c6c0e1bb787288a1f5adfa")
	s := New(Config{Now: c.now, Accounts: map[string]string{stark.HexFelt(addr): stark.HexFelt(key.PublicKey())}})
	send := func(k *stark.Key, account string, ts, exp int64) *httptest.ResponseRecorder {
		a, _ := stark.ParseFelt(account)
		r, sv, _ := k.Sign(stark.AuthHash(stark.ChainMainnet, a, ts, exp))
		req := httptest.NewRequest(http.MethodPost, "/v1/auth/"+stark.HexFelt(k.PublicKey()), nil)
		req.Header.Set("PARADEX-STARKNET-ACCOUNT", account)
		req.Header.Set("PARADEX-STARKNET-SIGNATURE", stark.FormatSignature(r, sv))
		req.Header.Set("PARADEX-TIMESTAMP", itoa(ts))
		req.Header.Set("PARADEX-SIGNATURE-EXPIRATION", itoa(exp))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	now := c.now().Unix()
	for _, tt := range []struct {
		name   string
		rec    *httptest.ResponseRecorder
		status int
		code   string
	}{
		{"good", send(key, stark.HexFelt(addr), now, now+180), http.StatusOK, ""},
		{"expired", send(key, stark.HexFelt(addr), now-400, now-10), http.StatusBadRequest, "INVALID_TIMESTAMP"},
		{"unknown account", send(key, "0x1234", now, now+180), http.StatusBadRequest, "NOT_ONBOARDED"},
		{"other key", send(other, stark.HexFelt(addr), now, now+180), http.StatusBadRequest, "INVALID_SUBKEY"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rec.Code != tt.status || errorCode(tt.rec) != tt.code {
				t.Fatalf("%d %s, want %d %s", tt.rec.Code, tt.rec.Body, tt.status, tt.code)
			}
		})
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
