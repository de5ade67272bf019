package sim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	"github.com/shopspring/decimal"
)

type vector struct {
	Name       string `json:"name"`
	Env        string `json:"env"`
	Credential struct {
		AgentAddress  string `json:"agentAddress"`
		WalletAddress string `json:"walletAddress"`
	} `json:"credential"`
	Request struct {
		Body *string `json:"body"`
	} `json:"request"`
	Signed bool `json:"signed"`
}

const vault = "0x1111111111111111111111111111111111111111"

// newVectorSim returns a simulator on the vectors' clock with their
// agents approved on their networks.
func newVectorSim(t *testing.T) (*sim.Sim, []vector) {
	t.Helper()
	raw, err := os.ReadFile("../testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		ClockStartMs int64    `json:"clockStartMs"`
		Vectors      []vector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	clock := time.UnixMilli(f.ClockStartMs + 10_000)
	s := sim.New(sim.Config{Now: func() time.Time { return clock }})
	for _, v := range f.Vectors {
		if err := s.AddUser(v.Credential.WalletAddress, decimal.NewFromInt(100000)); err != nil {
			t.Fatal(err)
		}
		if err := s.AddVault(vault, v.Credential.WalletAddress, decimal.NewFromInt(100000)); err != nil {
			t.Fatal(err)
		}
	}
	return s, f.Vectors
}

func post(t *testing.T, h http.Handler, body []byte) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/exchange", bytes.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

// mutate changes one letter or digit to another of its class, keeping the
// JSON well-formed.
func mutate(b byte) (byte, bool) {
	switch {
	case b >= '0' && b <= '8':
		return b + 1, true
	case b == '9':
		return '0', true
	case b >= 'a' && b <= 'y':
		return b + 1, true
	case b == 'z':
		return 'a', true
	}
	return b, false
}

// TestVectorsAcceptedAndOneByteChangesRejected sends every signed vector
// as ccxt sent it (accepted: the answer is status ok, whatever each order's
// own fate), then every variant with one byte changed (rejected: a wrong
// signer, an unparseable body, or a bad signature; never executed).
func TestVectorsAcceptedAndOneByteChangesRejected(t *testing.T) {
	s, vectors := newVectorSim(t)
	for _, v := range vectors {
		s.ApproveAgent(v.Credential.WalletAddress, v.Credential.AgentAddress, v.Env == "mainnet")
	}
	h := s.Handler()
	for _, v := range vectors {
		if !v.Signed {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			body := []byte(*v.Request.Body)
			for i := range body {
				b, ok := mutate(body[i])
				if !ok {
					continue
				}
				changed := append([]byte(nil), body...)
				changed[i] = b
				code, out := post(t, h, changed)
				if code == http.StatusOK && out["status"] != "err" {
					t.Fatalf("byte %d changed (%q): accepted: %v\n%s", i, b, out, changed)
				}
			}
			before := len(s.ReceivedOrders())
			code, out := post(t, h, body)
			if code != http.StatusOK || out["status"] != "ok" {
				t.Fatalf("vector rejected: %d %v", code, out)
			}
			if len(s.ReceivedOrders()) < before {
				t.Fatal("orders lost")
			}
		})
	}
}

// TestWrongNetworkOrAgentRejected: a testnet agent's signature does not
// pass on mainnet, and an unapproved key gets the venue's message.
func TestWrongNetworkOrAgentRejected(t *testing.T) {
	_, vectors := newVectorSim(t)
	for _, v := range vectors {
		if !v.Signed {
			continue
		}
		s, _ := newVectorSim(t)
		h := s.Handler()
		// Approve the agent on the other network only.
		s.ApproveAgent(v.Credential.WalletAddress, v.Credential.AgentAddress, v.Env != "mainnet")
		code, out := post(t, h, []byte(*v.Request.Body))
		msg, _ := out["response"].(string)
		if code != http.StatusOK || out["status"] != "err" || !bytes.Contains([]byte(msg), []byte("does not exist")) {
			t.Fatalf("%s: signed for %s, agent approved for the other network: %d %v", v.Name, v.Env, code, out)
		}
	}
}
