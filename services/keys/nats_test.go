package keys_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
)

// natsFixture runs the Service on an embedded NATS server under a
// test-unique subject prefix, with a separate client connection.
func natsFixture(t *testing.T) (*fixture, *nats.Conn, contract.Subjects) {
	t.Helper()
	srv := testenv.EmbeddedNATS(t)
	svcConn, err := nats.Connect("", nats.InProcessServer(srv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svcConn.Close)
	client, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	cfg := testConfig()
	cfg.SubjectPrefix = testenv.Prefix(t)
	cfg.AdminAddr = "127.0.0.1:0"
	f := newFixture(t, cfg, svcConn)
	if err := f.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f, client, contract.NewSubjects(cfg.SubjectPrefix)
}

func request(t *testing.T, nc *nats.Conn, subject string, req, resp any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return bus.Request(ctx, nc, subject, nil, req, resp)
}

func TestNATSLookups(t *testing.T) {
	f, nc, subj := natsFixture(t)
	ctx := context.Background()
	acct := f.account(t, contract.TierBuilder)
	k, err := f.svc.CreateKey(ctx, acct.ID, keys.KeyRequest{Env: contract.KeyEnvTest, AllowedExchanges: []contract.Exchange{contract.Paper}})
	if err != nil {
		t.Fatal(err)
	}
	secret := `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `"}`
	cred, err := f.svc.CreateCredential(ctx, acct.ID, keys.CredentialRequest{Exchange: contract.Binance, Env: contract.Testnet, Label: "b", Secret: json.RawMessage(secret)})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("key by hash", func(t *testing.T) {
		var got contract.KeyInfo
		if err := request(t, nc, subj.KeyLookup(), contract.KeyLookupRequest{Hash: k.Key.Hash()}, &got); err != nil {
			t.Fatal(err)
		}
		assertKey(t, got, k.Info)
	})
	t.Run("credential", func(t *testing.T) {
		var got contract.CredentialInfo
		if err := request(t, nc, subj.CredentialLookup(), contract.CredentialLookupRequest{CredentialID: cred.ID}, &got); err != nil {
			t.Fatal(err)
		}
		if got != cred {
			t.Fatalf("credential = %+v, want %+v", got, cred)
		}
	})
	t.Run("secret on its exchange", func(t *testing.T) {
		var got contract.SecretResponse
		if err := request(t, nc, subj.Secret(contract.Binance), contract.SecretRequest{CredentialID: cred.ID}, &got); err != nil {
			t.Fatal(err)
		}
		var fields map[string]string
		if err := got.Secret.Decode(&fields); err != nil || fields["apiKey"] != secretAPIKey || fields["apiSecret"] != secretAPISec || got.Credential != cred {
			t.Fatalf("secret response = %+v (%v)", got.Credential, err)
		}
	})

	tests := []struct {
		name    string
		subject string
		req     any
		code    contract.Code
	}{
		{name: "unknown hash", subject: subj.KeyLookup(), req: contract.KeyLookupRequest{Hash: strings.Repeat("a", 64)}, code: contract.CodeInvalidAPIKey},
		{name: "bad body", subject: subj.KeyLookup(), req: []int{1}, code: contract.CodeInvalidRequest},
		{name: "unknown credential", subject: subj.CredentialLookup(), req: contract.CredentialLookupRequest{CredentialID: "nope"}, code: contract.CodeCredentialNotFound},
		{name: "secret on another exchange", subject: subj.Secret(contract.Bybit), req: contract.SecretRequest{CredentialID: cred.ID}, code: contract.CodeCredentialNotFound},
		{name: "secret on paper", subject: subj.Secret(contract.Paper), req: contract.SecretRequest{CredentialID: cred.ID}, code: contract.CodeCredentialNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw json.RawMessage
			err := request(t, nc, tt.subject, tt.req, &raw)
			var ce *contract.Error
			if !errors.As(err, &ce) || ce.Code != tt.code {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
			if strings.Contains(ce.Message, secretAPISec) {
				t.Fatal("error echoes the secret")
			}
		})
	}

	t.Run("revoked key keeps answering with RevokedAt", func(t *testing.T) {
		if _, err := f.svc.RevokeKey(ctx, k.Info.ID); err != nil {
			t.Fatal(err)
		}
		var got contract.KeyInfo
		if err := request(t, nc, subj.KeyLookup(), contract.KeyLookupRequest{Hash: k.Key.Hash()}, &got); err != nil {
			t.Fatal(err)
		}
		if got.RevokedAt == nil {
			t.Fatal("RevokedAt not set")
		}
	})
	t.Run("deleted credential", func(t *testing.T) {
		if err := f.svc.DeleteCredential(ctx, cred.ID); err != nil {
			t.Fatal(err)
		}
		var ce *contract.Error
		err := request(t, nc, subj.CredentialLookup(), contract.CredentialLookupRequest{CredentialID: cred.ID}, &contract.CredentialInfo{})
		if !errors.As(err, &ce) || ce.Code != contract.CodeCredentialNotFound {
			t.Fatalf("err = %v, want CREDENTIAL_NOT_FOUND", err)
		}
		err = request(t, nc, subj.Secret(contract.Binance), contract.SecretRequest{CredentialID: cred.ID}, &contract.SecretResponse{})
		if !errors.As(err, &ce) || ce.Code != contract.CodeCredentialNotFound {
			t.Fatalf("err = %v, want CREDENTIAL_NOT_FOUND", err)
		}
	})
	t.Run("logs hold no secret", func(t *testing.T) {
		if logs := f.logs.String(); strings.Contains(logs, secretAPISec) || strings.Contains(logs, secretAPIKey) || strings.Contains(logs, k.Key.Reveal()) {
			t.Fatal("logs contain a secret")
		}
	})
}

func TestChangeEvents(t *testing.T) {
	f, nc, subj := natsFixture(t)
	ctx := context.Background()
	events := make(chan contract.ChangeEvent, 4)
	sub, err := nc.Subscribe(subj.Events(), func(m *nats.Msg) {
		var ev contract.ChangeEvent
		if err := json.Unmarshal(m.Data, &ev); err == nil {
			events <- ev
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	acct := f.account(t, contract.TierFree)
	k, err := f.svc.CreateKey(ctx, acct.ID, keys.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		t.Fatal(err)
	}
	cred, err := f.svc.CreateCredential(ctx, acct.ID, keys.CredentialRequest{Exchange: contract.Paper, Env: contract.Testnet})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		action func() error
		want   contract.ChangeEvent
	}{
		{
			name:   "revoke",
			action: func() error { _, err := f.svc.RevokeKey(ctx, k.Info.ID); return err },
			want:   contract.ChangeEvent{Kind: contract.KeyRevoked, KeyID: k.Info.ID, KeyHash: k.Key.Hash()},
		},
		{
			name:   "delete credential",
			action: func() error { return f.svc.DeleteCredential(ctx, cred.ID) },
			want:   contract.ChangeEvent{Kind: contract.CredentialDeleted, CredentialID: cred.ID},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.action(); err != nil {
				t.Fatal(err)
			}
			select {
			case ev := <-events:
				if ev != tt.want {
					t.Fatalf("event = %+v, want %+v", ev, tt.want)
				}
			case <-time.After(time.Second):
				t.Fatal("no change event within 1s")
			}
		})
	}
}

func TestStartAndClose(t *testing.T) {
	f, _, _ := natsFixture(t)
	addr := f.svc.AdminAddr()
	if addr == "" {
		t.Fatal("admin api not listening")
	}

	t.Run("taken admin port fails at start", func(t *testing.T) {
		srv := testenv.EmbeddedNATS(t)
		nc, err := nats.Connect("", nats.InProcessServer(srv))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		cfg := testConfig()
		cfg.SubjectPrefix = testenv.Prefix(t)
		cfg.AdminAddr = addr
		g := newFixture(t, cfg, nc)
		if err := g.svc.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "admin api") {
			t.Fatalf("Start on a taken port: err = %v", err)
		}
		if err := g.svc.Close(); err != nil {
			t.Fatalf("Close after failed start: %v", err)
		}
	})
	t.Run("run stops on cancel", func(t *testing.T) {
		srv := testenv.EmbeddedNATS(t)
		nc, err := nats.Connect("", nats.InProcessServer(srv))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		cfg := testConfig()
		cfg.SubjectPrefix = testenv.Prefix(t)
		cfg.AdminAddr = "127.0.0.1:0"
		g := newFixture(t, cfg, nc)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- g.svc.Run(ctx) }()
		deadline := time.Now().Add(5 * time.Second)
		for g.svc.AdminAddr() == "" {
			if time.Now().After(deadline) {
				t.Fatal("Run did not start the admin api within 5s")
			}
			time.Sleep(5 * time.Millisecond) // polling with a deadline, not coordination
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run = %v, want nil after cancel", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return within 5s of cancel")
		}
	})

	if err := f.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("admin api still listening after Close")
	}
}
