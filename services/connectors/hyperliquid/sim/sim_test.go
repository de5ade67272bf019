package sim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
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

// mutate changes one byte: a letter or digit to another of its class
// (keeping the JSON well-formed where it can), anything else by its lowest
// bit (a quote, brace, colon or comma; the body turns malformed).
func mutate(b byte) byte {
	switch {
	case b >= '0' && b <= '8', b >= 'a' && b <= 'y', b >= 'A' && b <= 'Y':
		return b + 1
	case b == '9':
		return '0'
	case b == 'z':
		return 'a'
	case b == 'Z':
		return 'A'
	}
	return b ^ 1
}

// TestVectorsAcceptedAndOneByteChangesRejected sends every signed vector
// with each of its bytes changed in turn (each rejected: a wrong signer, a
// bad signature or a body that does not deserialize, and nothing
// executed), then as ccxt sent it (accepted: status ok, executed once, for
// the vector's account or vault, signed by its agent on its network).
func TestVectorsAcceptedAndOneByteChangesRejected(t *testing.T) {
	_, vectors := newVectorSim(t)
	for _, v := range vectors {
		if !v.Signed {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			s, _ := newVectorSim(t)
			mainnet := v.Env == "mainnet"
			s.ApproveAgent(v.Credential.WalletAddress, v.Credential.AgentAddress, mainnet)
			h := s.Handler()
			body := []byte(*v.Request.Body)
			for i := range body {
				changed := append([]byte(nil), body...)
				changed[i] = mutate(body[i])
				code, out := post(t, h, changed)
				if code == http.StatusOK && out["status"] != "err" {
					t.Fatalf("byte %d changed to %q: accepted: %v\n%s", i, changed[i], out, changed)
				}
			}
			if acts := s.Actions(); len(acts) != 0 {
				t.Fatalf("changed bodies executed %d actions", len(acts))
			}
			code, out := post(t, h, body)
			if code != http.StatusOK || out["status"] != "ok" {
				t.Fatalf("vector rejected: %d %v", code, out)
			}
			acts := s.Actions()
			user := v.Credential.WalletAddress
			if strings.Contains(*v.Request.Body, `"vaultAddress"`) {
				user = vault
			}
			if len(acts) != 1 || acts[0].Signer != v.Credential.AgentAddress || acts[0].User != user || acts[0].Mainnet != mainnet {
				t.Fatalf("accepted actions %+v, want one by %s for %s (mainnet=%v)", acts, v.Credential.AgentAddress, user, mainnet)
			}
			// The same body again reuses its nonce: refused, not executed twice.
			if _, out := post(t, h, body); out["status"] != "err" || len(s.Actions()) != 1 {
				t.Fatalf("replayed vector: %v", out)
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
